// RateLimiter: at most N events per second, with one second's worth as a burst (GCRA).
//
// The limiter keeps one "theoretical arrival time" (tat): each admitted event pushes it one
// interval (1 s / N) into the future, and an event is refused while tat would run more than one
// second ahead of now. Callers pass the time in, so tests can drive it with their own clock.
//
// Thread safety: `acquire` and `set_rate` from any thread. Relaxed atomics are enough: the only
// invariant is that each admitted event advances tat exactly once, which the CAS guarantees.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace elfin::detail {

class RateLimiter {
 public:
  /// Events per second; 0 refuses everything.
  explicit RateLimiter(std::uint64_t per_second = 0) { set_rate(per_second); }

  void set_rate(std::uint64_t per_second) {
    std::int64_t interval = 0;  // unlimited
    if (per_second == 0) {
      interval = -1;
    } else if (per_second < kSecondNs) {
      interval = static_cast<std::int64_t>(kSecondNs / per_second);
    }
    interval_ns_.store(interval, std::memory_order_relaxed);
  }

  /// No limit (a rate of 1e9 a second or more): `acquire` admits without looking at the time.
  [[nodiscard]] bool unlimited() const { return interval_ns_.load(std::memory_order_relaxed) == 0; }

  [[nodiscard]] bool acquire(std::uint64_t now_ns) {
    const std::int64_t interval = interval_ns_.load(std::memory_order_relaxed);
    if (interval == 0) return true;
    if (interval < 0) return false;
    const auto now = static_cast<std::int64_t>(now_ns);
    std::int64_t tat = tat_ns_.load(std::memory_order_relaxed);
    for (;;) {
      const std::int64_t next = std::max(tat, now) + interval;
      if (next - now > static_cast<std::int64_t>(kSecondNs)) return false;
      if (tat_ns_.compare_exchange_weak(tat, next, std::memory_order_relaxed)) return true;
    }
  }

 private:
  static constexpr std::uint64_t kSecondNs = 1'000'000'000;
  std::atomic<std::int64_t> interval_ns_{0};  // 1e9 / rate; 0 = unlimited, -1 = none admitted
  std::atomic<std::int64_t> tat_ns_{0};
};

}  // namespace elfin::detail
