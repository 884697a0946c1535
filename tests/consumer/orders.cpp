#include "orders.hpp"

#include <fmt/format.h>

namespace shop {

namespace {

elfin::Task<> item(elfin::Context<OrdersConfig, std::string> ctx) {
  std::uint64_t placed = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(*envelope, [&](const PlaceOrder& order, elfin::ResponseToken<PlaceOrder> token) {
      if (order.count > ctx.config().max_count) {
        ctx.respond(std::move(token),
                    elfin::Err{Refused{fmt::format("{} is over {}", order.count, ctx.config().max_count)}});
        return;
      }
      ctx.respond(std::move(token), ++placed);
    });
  }
}

}  // namespace

elfin::Blueprint orders() {
  using Outcome = elfin::Outcome<std::string>;
  return elfin::ActorGroup()
      .config<OrdersConfig>()
      .router(elfin::MapRouter<std::string>([](const elfin::Envelope& e) {
        if (const auto* order = e.get<PlaceOrder>()) return Outcome::Unicast(order->item);
        return Outcome::Default();
      }))
      .exec(item);
}

}  // namespace shop
