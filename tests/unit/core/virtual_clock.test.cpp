// The virtual clock's hooks for a simulation driving several systems: a shared start, the next
// timer's deadline, and holds that keep a system from counting as settled.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <elfin/internal/system_hooks.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using namespace elfin;
using namespace elfin::test;

namespace {

Task<> ticking(Context<> ctx) {
  ctx.attach(Interval(Tick{})).start(250ms);
  while (auto envelope = co_await ctx.recv()) {
  }
}

System start_ticking(std::optional<std::chrono::steady_clock::time_point> start) {
  Topology topology;
  topology.local("ticking").mount(ActorGroup().exec(ticking));
  StartOptions options;
  options.workers = 1;
  options.virtual_time = true;
  options.virtual_start = start;
  return start_or_fail(std::move(topology), std::move(options));
}

// Each tick, what the actor reads from ctx.now().
struct TickTimes {
  std::mutex mutex;
  std::vector<std::chrono::steady_clock::time_point> at;
};

}  // namespace

TEST_CASE("ctx.now() is the system's clock: under virtual time an actor reads the instant its timer fired",
          "[core][virtual_time]") {
  const std::chrono::steady_clock::time_point epoch{std::chrono::hours(5)};
  auto seen = std::make_shared<TickTimes>();
  Topology topology;
  topology.local("ticking").mount(ActorGroup().exec([seen](Context<> ctx) -> Task<> {
    ctx.attach(Interval(Tick{})).start(250ms);
    while (auto envelope = co_await ctx.recv()) {
      if (envelope->get<Tick>() == nullptr) continue;
      std::lock_guard lock(seen->mutex);
      seen->at.push_back(ctx.now());
    }
  }));
  StartOptions options;
  options.workers = 1;
  options.virtual_time = true;
  options.virtual_start = epoch;
  System system = start_or_fail(std::move(topology), std::move(options));
  REQUIRE(system.advance_time(600ms));
  std::lock_guard lock(seen->mutex);
  // The steady clock of this machine is nowhere near `epoch`: only the virtual clock gives these.
  CHECK(seen->at == std::vector{epoch + 250ms, epoch + 500ms});
}

TEST_CASE("systems given one virtual start share a clock, and say when their next timer is due",
          "[core][virtual_time]") {
  const std::chrono::steady_clock::time_point epoch{std::chrono::hours(5)};
  System a = start_ticking(epoch);
  System b = start_ticking(epoch);
  REQUIRE(a.advance_time(0ms));
  REQUIRE(b.advance_time(0ms));
  CHECK(a.now() == epoch);
  CHECK(b.now() == epoch);
  CHECK(a.next_timer() == epoch + 250ms);
  REQUIRE(a.advance_time(300ms));
  CHECK(a.now() == epoch + 300ms);
  CHECK(a.next_timer() == epoch + 500ms);
  CHECK(b.next_timer() == epoch + 250ms);  // b's clock did not move
}

TEST_CASE("a quiescence hold keeps advance_time waiting until it is dropped", "[core][virtual_time]") {
  System system = start_ticking(std::nullopt);
  REQUIRE(system.advance_time(0ms));
  {
    detail::QuiescenceHold hold(system.core());  // work in flight outside the workers
    auto advanced = system.advance_time(0ms, 50ms);
    REQUIRE_FALSE(advanced);
    CHECK(advanced.error().kind() == TimeError::NotSettled);
  }
  CHECK(system.advance_time(0ms, 50ms));
}
