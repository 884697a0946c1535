// The timer service: ordering, cancellation, real-time firing on the timer thread, and virtual
// time advanced step by step with the system settling between timers.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/detail/timer_service.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using namespace std::chrono_literals;
using detail::TimerService;

namespace {

/// Records callback names from any thread.
struct Fired {
  std::mutex mu;
  std::vector<std::string> names;
  void add(std::string name) {
    std::lock_guard lock(mu);
    names.push_back(std::move(name));
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mu);
    return names;
  }
};

Result<void, TimeError> settled() { return {}; }

}  // namespace

TEST_CASE("real-time timers fire on the timer thread in deadline order, ties in scheduling order", "[core][time]") {
  TimerService timers;
  Fired fired;
  const auto base = timers.now();
  std::ignore = timers.schedule_at(base + 30ms, [&] { fired.add("c"); });
  std::ignore = timers.schedule_at(base + 10ms, [&] { fired.add("a1"); });
  std::ignore = timers.schedule_at(base + 10ms, [&] { fired.add("a2"); });
  std::ignore = timers.schedule_at(base + 20ms, [&] { fired.add("b"); });
  std::thread::id thread;
  std::ignore = timers.schedule_at(base + 40ms, [&] {
    thread = std::this_thread::get_id();
    fired.add("d");
  });
  REQUIRE(eventually([&] { return fired.get().size() == 5; }));
  CHECK(fired.get() == std::vector<std::string>{"a1", "a2", "b", "c", "d"});
  CHECK(thread != std::this_thread::get_id());
  CHECK(timers.pending() == 0);
}

TEST_CASE("a real-time timer does not fire before its deadline", "[core][time]") {
  TimerService timers;
  std::atomic<bool> fired{false};
  TimerService::TimePoint at;
  const auto deadline = timers.now() + 20ms;
  std::ignore = timers.schedule_at(deadline, [&] {
    at = TimerService::Clock::now();
    fired = true;
  });
  REQUIRE(eventually([&] { return fired.load(); }));
  CHECK(at >= deadline);
}

TEST_CASE("a cancelled timer never fires and cancel says whether it stopped one", "[core][time]") {
  TimerService timers;
  Fired fired;
  const auto base = timers.now();
  // Deadlines far enough that a slow machine (sanitizers, two cores) cancels before the first.
  const auto doomed = timers.schedule_at(base + 200ms, [&] { fired.add("cancelled"); });
  const auto sentinel = timers.schedule_at(base + 300ms, [&] { fired.add("sentinel"); });
  CHECK(timers.cancel(doomed));
  CHECK_FALSE(timers.cancel(doomed));  // already cancelled
  // The sentinel fires after the cancelled one's deadline, so seeing it alone proves the cancel.
  REQUIRE(eventually([&] { return !fired.get().empty(); }));
  CHECK(fired.get() == std::vector<std::string>{"sentinel"});
  CHECK_FALSE(timers.cancel(sentinel));  // fired already
  CHECK_FALSE(timers.cancel(12345));     // never existed
}

TEST_CASE("a timer scheduled earlier than the one the thread sleeps for wakes it", "[core][time]") {
  TimerService timers;
  Fired fired;
  auto far = timers.schedule_after(1h, [&] { fired.add("far"); });
  std::ignore = timers.schedule_after(1ms, [&] { fired.add("near"); });
  REQUIRE(eventually([&] { return !fired.get().empty(); }));
  CHECK(fired.get() == std::vector<std::string>{"near"});
  CHECK(timers.cancel(far));
}

TEST_CASE("callbacks may schedule and cancel timers themselves", "[core][time]") {
  TimerService timers;
  std::atomic<int> chain{0};
  std::function<void()> step = [&] {
    if (++chain < 5) std::ignore = timers.schedule_after(1ms, step);
  };
  std::ignore = timers.schedule_after(1ms, step);
  REQUIRE(eventually([&] { return chain.load() == 5; }));
}

TEST_CASE("real-time timers due together fire in one pass between the fire batch's begin and end", "[core][time]") {
  TimerService timers;
  Fired fired;
  timers.set_fire_batch([&] { fired.add("begin"); }, [&] { fired.add("end"); });
  // The first timer holds the timer thread in its pass while three more become due; those three
  // then fire in the next pass, together.
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};
  std::ignore = timers.schedule_after(0ns, [&] {
    holding = true;
    while (!release.load()) std::this_thread::yield();
    fired.add("first");
  });
  REQUIRE(eventually([&] { return holding.load(); }));
  for (const char* name : {"a", "b", "c"}) {
    std::ignore = timers.schedule_after(0ns, [&fired, name] { fired.add(name); });
  }
  release = true;
  REQUIRE(eventually([&] { return fired.get().size() == 8; }));
  CHECK(fired.get() == std::vector<std::string>{"begin", "first", "end", "begin", "a", "b", "c", "end"});
}

TEST_CASE("shutdown drops pending timers without running them", "[core][time]") {
  auto owned = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owned;
  std::atomic<bool> fired{false};
  {
    TimerService timers;
    std::ignore = timers.schedule_after(1h, [&fired, owned = std::move(owned)] { fired = true; });
    CHECK(timers.pending() == 1);
    timers.shutdown();
    CHECK(timers.pending() == 0);
    CHECK(watch.expired());  // the callback (and what it owned) is gone
    std::ignore = timers.schedule_after(0ns, [&] { fired = true; });
  }
  CHECK_FALSE(fired.load());
}

TEST_CASE("virtual time stands still until advanced", "[core][time]") {
  TimerService timers(true);
  const auto start = timers.now();
  bool fired = false;
  std::ignore = timers.schedule_after(10s, [&] { fired = true; });
  std::this_thread::sleep_for(2ms);  // real time passing must not move virtual time
  CHECK(timers.now() == start);
  CHECK_FALSE(fired);

  REQUIRE(timers.advance_to(start + 9s, settled));
  CHECK(timers.now() == start + 9s);
  CHECK_FALSE(fired);
  REQUIRE(timers.advance_to(start + 10s, settled));
  CHECK(fired);
  CHECK(timers.now() == start + 10s);
}

TEST_CASE("virtual time fires timers in order at their own instant and settles after each", "[core][time]") {
  TimerService timers(true);
  const auto start = timers.now();
  std::vector<std::string> log;
  auto at = [&](const char* name) {
    return [&, name] { log.push_back(fmt::format("{}@{}", name, (timers.now() - start) / 1ms)); };
  };
  std::ignore = timers.schedule_at(start + 3s, at("c"));
  std::ignore = timers.schedule_at(start + 1s, at("a"));
  std::ignore = timers.schedule_at(start + 2s, at("b1"));
  std::ignore = timers.schedule_at(start + 2s, at("b2"));
  auto settle = [&]() -> Result<void, TimeError> {
    log.push_back("settle");
    return {};
  };
  REQUIRE(timers.advance_to(start + 5s, settle));
  CHECK(log == std::vector<std::string>{"a@1000", "settle", "b1@2000", "b2@2000", "settle", "c@3000", "settle"});
  CHECK(timers.now() == start + 5s);
}

TEST_CASE("a chain of virtual timers plays out within one advance", "[core][time]") {
  TimerService timers(true);
  const auto start = timers.now();
  std::vector<long> ticks;
  std::function<void()> tick = [&] {
    ticks.push_back(static_cast<long>((timers.now() - start) / 1s));
    std::ignore = timers.schedule_after(3s, tick);
  };
  std::ignore = timers.schedule_after(3s, tick);
  const auto wall = std::chrono::steady_clock::now();
  REQUIRE(timers.advance_to(start + 30s, settled));
  CHECK(ticks == std::vector<long>{3, 6, 9, 12, 15, 18, 21, 24, 27, 30});
  CHECK(std::chrono::steady_clock::now() - wall < 1s);
  CHECK(timers.pending() == 1);  // the tick at 33 s waits for the next advance
}

TEST_CASE("a virtual timer cancelled by an earlier one never fires", "[core][time]") {
  TimerService timers(true);
  const auto start = timers.now();
  bool late = false;
  const auto victim = timers.schedule_at(start + 2s, [&] { late = true; });
  bool cancelled = false;
  std::ignore = timers.schedule_at(start + 1s, [&] { cancelled = timers.cancel(victim); });
  REQUIRE(timers.advance_to(start + 3s, settled));
  CHECK(cancelled);
  CHECK_FALSE(late);
}

TEST_CASE("a settle error stops the advance where it happened", "[core][time]") {
  TimerService timers(true);
  const auto start = timers.now();
  int fired = 0;
  std::ignore = timers.schedule_at(start + 1s, [&] { ++fired; });
  std::ignore = timers.schedule_at(start + 2s, [&] { ++fired; });
  auto result = timers.advance_to(
      start + 5s, [] { return Result<void, TimeError>{Err{TimeError(TimeError::NotSettled, "stuck")}}; });
  REQUIRE_FALSE(result);
  CHECK(result.error().message() == "stuck");
  CHECK(fired == 1);
  CHECK(timers.now() == start + 1s);
}

TEST_CASE("advancing real time is an error", "[core][time]") {
  TimerService timers;
  auto result = timers.advance_to(timers.now() + 1s, settled);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message(), Catch::Contains("virtual time"));
}

// --- through a running system ------------------------------------------------------------------

namespace {

/// On Start, hops through 50 self-sent Ticks, then reports Seen{"done"}; Boom makes it busy
/// forever (it yields and never waits).
Task<> hopper(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    std::optional<std::uint64_t> next;
    bool spin = false;
    co_await handle(
        *envelope, [&](const Start&) { next = 50; },
        [&](const Tick& t) {
          if (t.n > 0) next = t.n - 1;
        },
        [&](const Boom&) { spin = true; });
    while (spin) {  // until termination closes the mailbox
      co_await ctx.yield_now();
      auto polled = ctx.try_recv();
      spin = polled || polled.error() != TryRecvError::Closed;
    }
    if (next && *next > 0) {
      Tick tick{*next};
      std::ignore = co_await ctx.send_to(ctx.addr(), tick);
    } else if (next) {
      Seen seen{0, "done", 0};
      std::ignore = co_await ctx.send(std::move(seen));
    }
  }
}

}  // namespace

TEST_CASE("advance waits until the system is quiescent before it returns", "[core][time]") {
  auto proxy = testing::proxy(ActorGroup().exec(hopper), {}, {.virtual_time = true});
  proxy.send(Start{});
  proxy.advance(0s);
  // No waiting here: the whole chain of 50 hops ran inside advance.
  auto report = proxy.try_recv();
  REQUIRE(report);
  REQUIRE(report->get<Seen>());
  CHECK(report->get<Seen>()->what == "done");
}

TEST_CASE("advance fails, naming the cause, when the system never settles", "[core][time]") {
  auto proxy = testing::proxy(ActorGroup().exec(hopper), {}, {.virtual_time = true});
  proxy.send(Boom{"spin"});
  auto result = proxy.system().advance_time(1s, 50ms);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message(), Catch::Contains("did not settle within 50 ms"));
  proxy.set_timeout(50ms);
  CHECK_THROWS_AS(proxy.advance(1s), testing::ProxyError);
}

TEST_CASE("advance_time is refused by a real-time system", "[core][time]") {
  auto proxy = testing::proxy(ActorGroup().exec(hopper));
  auto result = proxy.system().advance_time(1s);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().message(), Catch::Contains("real time"));
}

TEST_CASE("a system's timers run on its virtual clock", "[core][time]") {
  auto proxy = testing::proxy(ActorGroup().exec(hopper), {}, {.virtual_time = true});
  TimerService& timers = detail::timers_of(proxy.system().core());
  REQUIRE(timers.is_virtual());
  const auto start = timers.now();
  std::atomic<int> ticks{0};
  // The chain ends with the 30th tick: a timer left pending would outlive `tick` and fire while the
  // proxy's system winds down (its join advances virtual time).
  std::function<void()> tick = [&] {
    if (++ticks < 30) std::ignore = timers.schedule_after(1s, tick);
  };
  std::ignore = timers.schedule_after(1s, tick);
  proxy.advance(30s);
  CHECK(ticks.load() == 30);
  CHECK(timers.now() - start == 30s);
}
