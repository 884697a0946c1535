// MemoryTracker (Linux): watches the machine's memory and starts the system's graceful
// termination before the OOM killer ends the process without one.
//
// Every `interval` (config `[system.runtime] memory_check_interval`, default 3 s) it reads
// /proc/meminfo; when the used share, 1 - MemAvailable / MemTotal, exceeds `threshold`
// (`[system.runtime] memory_threshold`, default 0.9) it calls `on_exceeded` once with the reason
// and stops. Unlike elfo, both are configurable. Elsewhere (no /proc/meminfo) it logs once and stops.
//
// Thread safety: `start`/`stop` from the system's owner; the checks run as timer callbacks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include <elfin/detail/timer_service.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

struct MemoryUsage {
  std::uint64_t total_bytes = 0;
  std::uint64_t available_bytes = 0;
  [[nodiscard]] double used_ratio() const {
    return total_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(available_bytes) / static_cast<double>(total_bytes);
  }
};

/// MemTotal and MemAvailable from the text of /proc/meminfo.
[[nodiscard]] Result<MemoryUsage, std::string> parse_meminfo(std::string_view text);

class MemoryTracker {
 public:
  MemoryTracker(TimerService& timers, std::chrono::nanoseconds interval, double threshold,
                std::function<void(std::string)> on_exceeded);
  MemoryTracker(const MemoryTracker&) = delete;
  MemoryTracker& operator=(const MemoryTracker&) = delete;
  ~MemoryTracker();

  void start();
  /// No check runs after this returns, except one that is running right now.
  void stop();

 private:
  void check();
  void schedule_locked();

  TimerService& timers_;
  std::chrono::nanoseconds interval_;
  double threshold_;
  std::function<void(std::string)> on_exceeded_;
  std::mutex mu_;
  TimerService::TimerId timer_ = 0;  // guarded by mu_
  bool running_ = false;             // guarded by mu_
};

}  // namespace elfin::detail
