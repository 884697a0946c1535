// "stock.shoppers" (see stock.hpp): a steady stream of reservations, one at a time.
#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <elfin/elfin.hpp>

#include "protocol.hpp"
#include "stock.hpp"

namespace stock {

namespace {

using namespace elfin;

struct ShoppersConfig {
  std::chrono::milliseconds period{200};
  std::vector<std::string> skus{"apple", "pear"};
  std::uint32_t restock = 5;
  ELFIN_CONFIG(period, skus, restock);
};

/// The shoppers' own tick: protocol `shoppers`, so the `stock.*` route never carries it.
struct Shop {
  ELFIN_MESSAGE(shoppers, Shop);
};

// ANCHOR: shopper
Task<> shopper(Context<ShoppersConfig> ctx) {
  auto ticks = ctx.attach(Interval(Shop{}));
  ticks.start(ctx.config().period);
  std::size_t next = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const Shop&) -> Task<> {
      const auto& skus = ctx.config().skus;
      if (skus.empty()) co_return;
      std::string sku = skus[next++ % skus.size()];
      std::uint32_t restock = ctx.config().restock;  // config() is valid until the next recv
      auto reserved = co_await ctx.request(Reserve{sku, 1});
      if (!reserved) {
        log::warn("reserving {} failed: {}", sku, reserved.error());  // e.g. the items' node is down
      } else if (*reserved) {
        log::info("reserved 1 {}, {} left", sku, **reserved);
      } else {
        log::info("{} is out of stock, restocking {}", sku, restock);
        auto sent = co_await ctx.send(Restock{sku, restock});
        if (!sent) log::warn("restocking {} failed: {}", sku, sent.error());
      }
    });
  }
}
// ANCHOR_END: shopper

}  // namespace

Blueprint shoppers() { return ActorGroup().config<ShoppersConfig>().exec(shopper); }

// ANCHOR: register
void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add("stock.items", items(), "one actor per SKU: answers stock.Reserve and stock.Level");
  std::ignore = registry.add("stock.shoppers", shoppers(), "reserves one unit of each of `skus` in turn");
}
// ANCHOR_END: register

}  // namespace stock
