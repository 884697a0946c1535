// The fixed-rate schedule, and why it is measured from the intended start: a server stall on a
// virtual clock, seen by an open-loop client and by a closed-loop one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <elfin/loadgen/latency_histogram.hpp>
#include <elfin/loadgen/pacer.hpp>

namespace lg = elfin::loadgen;
using namespace std::chrono_literals;
using Clock = lg::Pacer::Clock;

TEST_CASE("pacer hands out the schedule's intended starts, shared by workers", "[loadgen]") {
  const Clock::time_point start{};
  lg::Pacer one(1000, start);
  CHECK(one.next() == start);
  CHECK(one.next() == start + 1ms);
  CHECK(one.intended(1'000'000) == start + 1000s);  // no drift from adding periods up
  lg::Pacer w0(3000, start, 0, 3);
  lg::Pacer w1(3000, start, 1, 3);
  lg::Pacer w2(3000, start, 2, 3);
  std::vector<Clock::time_point> all;
  for (int i = 0; i < 100; ++i) {
    all.push_back(w0.next());
    all.push_back(w1.next());
    all.push_back(w2.next());
  }
  const lg::Pacer whole(3000, start);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i] == whole.intended(i));
  CHECK(w0.issued() == 100);
}

TEST_CASE("a stall is charged to every operation that was due during it (no coordinated omission)", "[loadgen]") {
  // A server that answers in 1 ms, except that it stalls from t = 1 s to t = 1.1 s. 1000 ops/s
  // for 2 s. Virtual time: the test moves the clock, nothing sleeps.
  const Clock::time_point start{};
  auto serve = [&](Clock::time_point sent) {
    const auto stall_begin = start + 1s;
    const auto stall_end = start + 1100ms;
    if (sent >= stall_begin && sent < stall_end) return stall_end + 1ms;
    return sent + 1ms;
  };
  lg::LatencyHistogram open_loop;
  lg::Pacer pacer(1000, start);
  Clock::time_point now = start;
  for (int i = 0; i < 2000; ++i) {
    const auto intended = pacer.next();
    now = std::max(now, intended);  // sleep_until(intended): returns at once when late
    now = serve(now);
    open_loop.record(lg::Pacer::since(intended, now));
  }
  lg::LatencyHistogram closed_loop;  // latency from the actual send; the next waits for the answer
  now = start;
  for (int i = 0; i < 2000; ++i) {
    const auto sent = std::max(now, start + std::chrono::milliseconds(i));
    now = serve(sent);
    closed_loop.record(lg::Pacer::since(sent, now));
  }
  // Closed loop: one operation saw the stall; its p99 says nothing happened.
  CHECK(closed_loop.percentile(0.99) < 2'000'000);
  CHECK(closed_loop.max() >= 100'000'000);
  // Open loop: the ~100 operations due during the stall waited, from 100 ms down; p99 shows it.
  CHECK(open_loop.percentile(0.99) > 50'000'000);
  CHECK(open_loop.percentile(0.95) > 10'000'000);
  CHECK(open_loop.percentile(0.5) < 2'000'000);
  CHECK(open_loop.max() == closed_loop.max());
}
