// Cooperative scheduling: an actor that always has work cannot keep a worker to itself. With one
// worker thread, another actor still gets to answer a request.
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

constexpr Key kSpinner = 1;
constexpr Key kResponder = 2;

Outcome<Key> route_coop(const Envelope& e) {
  if (e.is<Start>() || e.is<GetValue>()) return Outcome<Key>::Unicast(kSpinner);
  if (const auto* q = e.get<Question>()) return Outcome<Key>::Unicast(q->key);
  return Outcome<Key>::Default();
}

/// Key 1 feeds itself: every Tick it handles sends it the next one, so its mailbox is never empty
/// and `recv` never has to wait. Key 2 answers Questions.
Task<> self_feeding(Context<NoConfig, Key> ctx) {
  std::uint64_t ticks = 0;
  while (auto envelope = co_await ctx.recv()) {
    bool tick = false;
    co_await handle(
        *envelope, [&](const Start&) { tick = true; },
        [&](const Tick&) {
          ++ticks;
          tick = true;
        },
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), ticks); },
        [&](const Question&, ResponseToken<Question> token) {
          ctx.respond(std::move(token), std::to_string(ctx.key()));
        });
    if (tick) {
      Tick next{ticks};
      std::ignore = co_await ctx.send_to(ctx.addr(), std::move(next));  // Closed once terminating
    }
  }
}

/// Never calls recv: a busy loop that yields, and polls its mailbox with try_recv.
Task<> busy_yielding(Context<NoConfig, Key> ctx) {
  std::uint64_t rounds = 0;
  for (;;) {
    ++rounds;
    co_await ctx.yield_now();
    auto polled = ctx.try_recv();
    if (!polled) {
      if (polled.error() == TryRecvError::Closed) break;
      continue;
    }
    co_await handle(
        polled.value(), [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), rounds); },
        [&](const Question&, ResponseToken<Question> token) {
          ctx.respond(std::move(token), std::to_string(ctx.key()));
        });
  }
}

Blueprint coop_group(bool yielding) {
  return ActorGroup().router(MapRouter<Key>(route_coop)).exec([yielding](Context<NoConfig, Key> ctx) {
    return ctx.key() == kSpinner && yielding ? busy_yielding(std::move(ctx)) : self_feeding(std::move(ctx));
  });
}

testing::ProxyOptions one_worker() { return testing::ProxyOptions{.timeout = std::chrono::seconds(5), .workers = 1}; }

}  // namespace

TEST_CASE("an actor whose mailbox never runs dry still lets another actor answer on a single worker",
          "[core][cooperative]") {
  auto proxy = testing::proxy(coop_group(false), {}, one_worker());
  proxy.send(Start{});
  CHECK(proxy.request(Question{kResponder, {}, ""}) == "2");
  // The spinner is still going: it handled many more messages than one budget's worth.
  const std::uint64_t before = proxy.request(GetValue{});
  CHECK(proxy.request(Question{kResponder, {}, ""}) == "2");
  const std::uint64_t after = proxy.request(GetValue{});
  CHECK(after > before);
}

TEST_CASE("an actor that loops without recv but yields lets another actor answer on a single worker",
          "[core][cooperative]") {
  auto proxy = testing::proxy(coop_group(true), {}, one_worker());
  const std::uint64_t before = proxy.request(GetValue{});  // starts the busy actor
  CHECK(proxy.request(Question{kResponder, {}, ""}) == "2");
  CHECK(proxy.request(GetValue{}) > before);
}
