// LogSink: where a system's log records go — to the logger group (`system.loggers`) without
// waiting, or to stderr when the topology has none — and the per-level counts of records emitted,
// dropped by the rate limiter and lost to a full logger mailbox (the `elfin_*_events_total` series).
//
// Thread safety: every member from any thread; enable() only before the system starts.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include <elfin/logging.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

class GroupRuntime;
class SystemCore;

class LogSink {
 public:
  explicit LogSink(SystemCore& system) : system_(system) {}

  /// Routes records to `loggers` from now on. Before the start.
  void enable(GroupRuntime& loggers) { logger_ = &loggers; }
  /// Sends a record to the logger without waiting (lost, and counted, if its mailbox is full), or
  /// writes it to stderr when there is no logger. Counts it as emitted.
  void log(LogLevel level, std::string_view group, std::string_view key, TraceId trace_id, std::string text);
  void count_limited(LogLevel level) { limited_[static_cast<std::size_t>(level)].fetch_add(1); }
  [[nodiscard]] LoggingCounters counters() const;

 private:
  SystemCore& system_;
  GroupRuntime* logger_ = nullptr;  // set before the start
  std::array<std::atomic<std::uint64_t>, kLogLevels> emitted_{};
  std::array<std::atomic<std::uint64_t>, kLogLevels> limited_{};
  std::array<std::atomic<std::uint64_t>, kLogLevels> lost_{};
};

}  // namespace elfin::detail
