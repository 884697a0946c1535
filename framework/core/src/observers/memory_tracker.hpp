// MemoryTracker (Linux): watches the process's memory and starts the system's graceful
// termination before the OOM killer ends the process without one.
//
// Every `interval` (config `[system.runtime] memory_check_interval`, default 3 s) it reads the
// process's resident set (/proc/self/statm) and the machine's memory (MemTotal in /proc/meminfo);
// when RSS / total exceeds `threshold` (`[system.runtime] memory_threshold`, default 0.9) it calls
// `on_exceeded` once with the reason and stops. The process's own share is what is watched (not
// the machine's free memory, as elfo does), so other processes' use never stops this one. Unlike
// elfo, both settings are configurable. Elsewhere (no /proc) it logs once and stops.
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
#include <elfin/logging.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

struct MemoryUsage {
  std::uint64_t total_bytes = 0;  ///< the machine's (MemTotal)
  std::uint64_t rss_bytes = 0;    ///< this process's resident set
  [[nodiscard]] double used_ratio() const {
    return total_bytes == 0 ? 0.0 : static_cast<double>(rss_bytes) / static_cast<double>(total_bytes);
  }
};

/// MemTotal, in bytes, from the text of /proc/meminfo.
[[nodiscard]] Result<std::uint64_t, std::string> parse_meminfo_total(std::string_view text);
/// The resident set, in bytes, from the text of /proc/self/statm (its second field, in pages).
[[nodiscard]] Result<std::uint64_t, std::string> parse_statm_rss(std::string_view text, std::uint64_t page_size);

class MemoryTracker {
 public:
  /// `log` says why the tracker stops (it cannot read /proc) or terminates the system.
  MemoryTracker(TimerService& timers, std::chrono::nanoseconds interval, double threshold,
                std::function<void(std::string)> on_exceeded, std::function<void(LogLevel, std::string)> log);
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
  std::function<void(LogLevel, std::string)> log_;
  std::mutex mu_;
  TimerService::TimerId timer_ = 0;  // guarded by mu_
  bool running_ = false;             // guarded by mu_
};

}  // namespace elfin::detail
