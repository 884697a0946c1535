// Logging: what actors (and the runtime) have to say, as records with time, level, trace id, group
// and key, written by the logger group `system.loggers` one line each:
//
//   2026-11-22T10:00:00.123Z INFO [7226239398017728512] counters/42 - incremented value=3
//
// From an actor, with fmt formatting:
//
//   elfin::log::info("incremented value={}", value);
//   elfin::log::warn("retrying {} after {}", order_id, elfin::format_duration(delay));
//
// Per group (`[<group>.system.logging]`, reloadable):
//
//   [counters.system.logging]
//   max_level = "Info"          # Error, Warn, Info, Debug or Trace; more verbose records are skipped
//   max_rate_per_level = 1000   # records per second and level; over it they are dropped (limited)
//
// A record is formatted only if its level passes, and sent to the logger without waiting: if the
// logger's mailbox is full the record is lost (counted), never blocking the actor. Without a
// `system.loggers` group records go straight to stderr. Outside an actor (no group to attribute it
// to) a record goes to stderr with the group `-`.
//
// Thread safety: the `log::` functions from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <elfin/config.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace elfin {

enum class LogLevel : std::uint8_t { Error, Warn, Info, Debug, Trace };
inline constexpr std::size_t kLogLevels = 5;

[[nodiscard]] std::string_view to_string(LogLevel level);
/// "Error", "Warn", "Info", "Debug", "Trace" (any case).
[[nodiscard]] Result<LogLevel, ConfigError> parse_log_level(std::string_view text);

/// `system.logging` of a group.
struct LoggingConfig {
  std::string max_level = "Info";
  std::uint64_t max_rate_per_level = 1000;
  ELFIN_CONFIG(max_level, max_rate_per_level);
};

/// One log record on its way to the logger.
struct LogRecord {
  std::uint64_t ts = 0;  ///< unix nanoseconds
  std::uint8_t level = 0;
  std::uint64_t trace_id = 0;
  std::string group;
  std::string key;
  std::string text;
  ELFIN_MESSAGE(elfin, LogRecord, ts, level, trace_id, group, key, text);
  ELFIN_NO_DUMPING;  // the log is its own record
};

/// Unix nanoseconds as RFC 3339 UTC with milliseconds, "2026-11-22T10:00:00.123Z": the time of log
/// lines and of `elfin dump`'s tables.
[[nodiscard]] std::string format_timestamp(std::uint64_t unix_ns);

/// "2026-11-22T10:00:00.123Z INFO [7226239398017728512] counters/42 - text\n"
[[nodiscard]] std::string format_log_line(const LogRecord& record);

/// Counters of the records of one system, by level.
struct LoggingCounters {
  std::array<std::uint64_t, kLogLevels> emitted{};  ///< passed the level and rate checks
  std::array<std::uint64_t, kLogLevels> limited{};  ///< dropped by max_rate_per_level
  std::array<std::uint64_t, kLogLevels> lost{};     ///< dropped because the logger's mailbox was full
};

namespace detail {
/// Whether the calling actor's group logs `level` (true outside an actor).
[[nodiscard]] bool log_enabled(LogLevel level);
/// Sends a formatted record from the calling actor (or to stderr outside one).
void emit_log(LogLevel level, std::string text);
}  // namespace detail

namespace log {

template <class... Args>
void at(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (detail::log_enabled(level)) detail::emit_log(level, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  at(LogLevel::Error, format, std::forward<Args>(args)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  at(LogLevel::Warn, format, std::forward<Args>(args)...);
}
template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  at(LogLevel::Info, format, std::forward<Args>(args)...);
}
template <class... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  at(LogLevel::Debug, format, std::forward<Args>(args)...);
}
template <class... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
  at(LogLevel::Trace, format, std::forward<Args>(args)...);
}

}  // namespace log
}  // namespace elfin

ELFIN_EXTERN_MESSAGE(elfin::LogRecord);  // compiled once, in src/messages.cpp
