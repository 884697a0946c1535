// "stock.items" (see stock.hpp): one actor per item.
#include <cstdint>
#include <string>
#include <utility>

#include <elfin/elfin.hpp>

#include "protocol.hpp"
#include "stock.hpp"

namespace stock {

namespace {

using namespace elfin;

// ANCHOR: config
struct ItemsConfig {
  std::uint32_t initial = 10;  ///< units a new item starts with
  ELFIN_CONFIG(initial);
};
// ANCHOR_END: config

// ANCHOR: actor
/// One item: its key is its SKU, its state the units left. Only this actor touches them, so
/// there is nothing to lock.
Task<> item(Context<ItemsConfig, std::string> ctx) {
  std::uint32_t units = ctx.config().initial;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,  //
        [&](const Restock& restock) { units += restock.quantity; },
        [&](const Reserve& reserve, ResponseToken<Reserve> token) {
          if (reserve.quantity > units) {
            ctx.respond(std::move(token), Err{OutOfStock{units}});
            return;
          }
          units -= reserve.quantity;
          ctx.respond(std::move(token), units);
        },
        [&](const Level&, ResponseToken<Level> token) { ctx.respond(std::move(token), units); });
  }
}
// ANCHOR_END: actor

// ANCHOR: router
/// Every message names its item: the router makes it the actor's key, and the group starts the
/// actor the first time a key is seen.
Outcome<std::string> by_sku(const Envelope& envelope) {
  if (const auto* m = envelope.get<Restock>()) return Outcome<std::string>::Unicast(m->sku);
  if (const auto* m = envelope.get<Reserve>()) return Outcome<std::string>::Unicast(m->sku);
  if (const auto* m = envelope.get<Level>()) return Outcome<std::string>::Unicast(m->sku);
  return Outcome<std::string>::Default();
}
// ANCHOR_END: router

}  // namespace

// ANCHOR: blueprint
Blueprint items() { return ActorGroup().config<ItemsConfig>().router(MapRouter<std::string>(by_sku)).exec(item); }
// ANCHOR_END: blueprint

}  // namespace stock
