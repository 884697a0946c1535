#include "observers/log_sink.hpp"

#include <chrono>
#include <cstdio>

#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/send_op.hpp>

namespace elfin::detail {

void LogSink::log(LogLevel level, std::string_view group, std::string_view key, TraceId trace_id, std::string text) {
  const auto level_no = static_cast<std::size_t>(level);
  emitted_[level_no].fetch_add(1, std::memory_order_relaxed);
  LogRecord record{static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count()),
                   static_cast<std::uint8_t>(level),
                   trace_id.raw(),
                   std::string(group),
                   std::string(key),
                   std::move(text)};
  if (logger_ == nullptr) {
    // One fputs per line keeps concurrent lines whole (stdio locks the stream per call).
    std::fputs(format_log_line(record).c_str(), stderr);
    return;
  }
  SendOp op{system_, logger_->addr(), Envelope::make(std::move(record), Addr{}, trace_id), SendMode::Try};
  std::ignore = op.run(nullptr);
  if (!op.result()) lost_[level_no].fetch_add(1, std::memory_order_relaxed);
}

LoggingCounters LogSink::counters() const {
  LoggingCounters c;
  for (std::size_t i = 0; i < kLogLevels; ++i) {
    c.emitted[i] = emitted_[i].load(std::memory_order_relaxed);
    c.limited[i] = limited_[i].load(std::memory_order_relaxed);
    c.lost[i] = lost_[i].load(std::memory_order_relaxed);
  }
  return c;
}

}  // namespace elfin::detail
