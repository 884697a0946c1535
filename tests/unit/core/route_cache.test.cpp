// Route caches (elfin/detail/route_cache.hpp): a sending actor reuses its last lookup of a unicast
// target without the routing lock. The cache must never outlive what it remembers: once the
// target finishes, the next send by the same sender reaches the actor started for that key anew.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

// Key 0 checks, on Start, from inside one actor (so through its route cache, which nothing else
// it does in between replaces: answers to its requests are not routed):
//   asks key 1 for its address twice (the second lookup is served by the cache), tells key 1 to
//   exit, then asks key 1 again until an actor answers with a different address.
// It reports "same", "new actor" or what went wrong. Other keys answer WhoAmI and exit on Keyed.
Outcome<Key> route(const Envelope& e) {
  if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key);
  if (const auto* w = e.get<WhoAmI>()) return Outcome<Key>::Unicast(w->key);
  if (e.is<Start>()) return Outcome<Key>::Unicast(0);
  return Outcome<Key>::Default();
}

Task<> checker(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<Start>()) continue;
    const Addr group = ctx.group_addr();
    auto first = co_await ctx.request_to(group, WhoAmI{1});
    auto second = co_await ctx.request_to(group, WhoAmI{1});
    std::string report = first && second && *first == *second ? "same" : "lookups differ";
    auto exit = co_await ctx.send_to(group, Keyed{1, {}, "exit"});
    if (!exit) report += ", exit not sent";
    // Until the group has removed the finished actor a request may still find it (and fail);
    // after that a new actor answers. A stale cache would keep finding the old one.
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    std::string outcome = "old actor until the deadline";
    while (std::chrono::steady_clock::now() < deadline) {
      auto again = co_await ctx.request_to(group, WhoAmI{1});
      if (again && first && *again != *first) {
        outcome = "new actor";
        break;
      }
      co_await ctx.yield_now();
    }
    Seen seen{0, report + ", " + outcome};
    std::ignore = co_await ctx.send(std::move(seen));
  }
}

Task<> target(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    bool exit = false;
    co_await handle(
        *envelope, [&](const WhoAmI&, ResponseToken<WhoAmI> token) { ctx.respond(std::move(token), ctx.addr().raw()); },
        [&](const Keyed&) { exit = true; });
    if (exit) co_return;
  }
}

Blueprint checker_group() {
  return ActorGroup().router(MapRouter<Key>(route)).exec([](Context<NoConfig, Key> ctx) {
    return ctx.key() == 0 ? checker(std::move(ctx)) : target(std::move(ctx));
  });
}

}  // namespace

TEST_CASE("route cache: a sender's next unicast after its target finished reaches the key's new actor",
          "[core][routing]") {
  auto proxy = testing::proxy(checker_group());
  proxy.send(Start{});
  CHECK(recv_seen(proxy, 1) == std::vector<std::string>{"0:same, new actor"});
}
