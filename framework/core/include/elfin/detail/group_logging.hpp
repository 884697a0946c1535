// GroupLogging: one group's logging controls — its most verbose level and a rate limit per level.
//
// Thread safety: `passes` from any thread; `configure` from any thread (a config update).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include <elfin/detail/rate_limiter.hpp>
#include <elfin/logging.hpp>

namespace elfin::detail {

class GroupLogging {
 public:
  void configure(LogLevel max_level, std::uint64_t max_rate_per_level) {
    max_level_.store(max_level, std::memory_order_relaxed);
    for (auto& limiter : limiters_) limiter.set_rate(max_rate_per_level);
  }
  [[nodiscard]] bool enabled(LogLevel level) const { return level <= max_level_.load(std::memory_order_relaxed); }
  /// The rate limit of `level` admits one more record now.
  [[nodiscard]] bool admit(LogLevel level, std::uint64_t now_ns) {
    return limiters_[static_cast<std::size_t>(level)].acquire(now_ns);
  }

 private:
  std::atomic<LogLevel> max_level_{LogLevel::Info};
  std::array<RateLimiter, kLogLevels> limiters_{RateLimiter{1000}, RateLimiter{1000}, RateLimiter{1000},
                                                RateLimiter{1000}, RateLimiter{1000}};
};

}  // namespace elfin::detail
