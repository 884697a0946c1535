#include <elfin/logging.hpp>

#include <time.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include "actor/current_actor.hpp"

#include "system/system_core.hpp"

namespace elfin {

namespace {

constexpr std::array<std::string_view, kLogLevels> kNames{"Error", "Warn", "Info", "Debug", "Trace"};
constexpr std::array<std::string_view, kLogLevels> kLineNames{"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

// The rate limit's clock: coarse (a few ms) and cheap; records carry the precise time.
std::uint64_t coarse_now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace

std::string_view to_string(LogLevel level) { return kNames[static_cast<std::size_t>(level)]; }

Result<LogLevel, ConfigError> parse_log_level(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    bool same =
        text.size() == kNames[i].size() && std::equal(text.begin(), text.end(), kNames[i].begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        });
    if (same) return static_cast<LogLevel>(i);
  }
  return Err{ConfigError(ConfigError::Invalid,
                         fmt::format("unknown log level \"{}\" (expected Error, Warn, Info, Debug or Trace)", text))};
}

std::string format_timestamp(std::uint64_t unix_ns) {
  using namespace std::chrono;
  sys_time<nanoseconds> time{nanoseconds{static_cast<std::int64_t>(unix_ns)}};
  auto days = floor<std::chrono::days>(time);
  year_month_day date{days};
  hh_mm_ss clock{floor<milliseconds>(time - days)};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), clock.hours().count(),
                     clock.minutes().count(), clock.seconds().count(), clock.subseconds().count());
}

std::string format_log_line(const LogRecord& r) {
  const auto level = kLineNames[std::min<std::size_t>(r.level, kLineNames.size() - 1)];
  return fmt::format("{} {} [{}] {}/{} - {}\n", format_timestamp(r.ts), level, r.trace_id, r.group, r.key, r.text);
}

namespace detail {

bool log_enabled(LogLevel level) {
  ActorCell* cell = t_current_actor;
  return cell != nullptr ? cell->group().logging().enabled(level) : level <= LogLevel::Info;
}

void emit_log(LogLevel level, std::string text) {
  ActorCell* cell = t_current_actor;
  if (cell == nullptr) {
    LogRecord record{static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count()),
                     static_cast<std::uint8_t>(level),
                     0,
                     "-",
                     "-",
                     std::move(text)};
    std::fputs(format_log_line(record).c_str(), stderr);
    return;
  }
  GroupRuntime& group = cell->group();
  if (!group.logging().admit(level, coarse_now_ns())) {
    group.system().log_sink().count_limited(level);
    return;
  }
  const auto& key = cell->key_for_dumps();
  group.system().log_sink().log(level, group.name(), key ? std::string_view{*key} : std::string_view{"_"},
                                cell->trace_id(), std::move(text));
}

}  // namespace detail
}  // namespace elfin
