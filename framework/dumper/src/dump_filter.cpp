#include <elfin/dumper/dump_filter.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include <elfin/duration.hpp>

namespace elfin::dumper {

namespace {

bool message_matches(std::string_view pattern, const DumpRecord& record) {
  auto dot = pattern.rfind('.');
  if (dot == std::string_view::npos) return pattern == record.message_name;
  return pattern.substr(0, dot) == record.protocol && pattern.substr(dot + 1) == record.message_name;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

template <class T>
bool take_number(std::string_view& text, std::size_t digits, T& out) {
  if (text.size() < digits) return false;
  // NOLINTNEXTLINE(bugprone-suspicious-stringview-data-usage): from_chars reads [first, last), no terminator
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, out);
  if (ec != std::errc{} || end != text.data() + digits) return false;
  text.remove_prefix(digits);
  return true;
}

bool take_char(std::string_view& text, char c) {
  if (text.empty() || (text.front() != c && std::tolower(static_cast<unsigned char>(text.front())) != c)) return false;
  text.remove_prefix(1);
  return true;
}

// RFC 3339 to unix nanoseconds; nullopt if `text` is not one.
std::optional<std::uint64_t> parse_rfc3339(std::string_view text) {
  int year = 0;
  unsigned month = 0;
  unsigned day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (!take_number(text, 4, year) || !take_char(text, '-') || !take_number(text, 2, month) || !take_char(text, '-') ||
      !take_number(text, 2, day) || !(take_char(text, 't') || take_char(text, ' ')) || !take_number(text, 2, hour) ||
      !take_char(text, ':') || !take_number(text, 2, minute) || !take_char(text, ':') ||
      !take_number(text, 2, second)) {
    return std::nullopt;
  }
  std::int64_t nanos = 0;
  if (take_char(text, '.')) {
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
    if (digits == 0) return std::nullopt;
    std::string fraction{text.substr(0, std::min<std::size_t>(digits, 9))};
    fraction.resize(9, '0');
    nanos = std::stoll(fraction);
    text.remove_prefix(digits);
  }
  std::int64_t offset_seconds = 0;
  if (!take_char(text, 'z')) {
    int sign = 1;
    if (take_char(text, '-')) {
      sign = -1;
    } else if (!take_char(text, '+')) {
      return std::nullopt;
    }
    int offset_hours = 0;
    int offset_minutes = 0;
    if (!take_number(text, 2, offset_hours) || !take_char(text, ':') || !take_number(text, 2, offset_minutes)) {
      return std::nullopt;
    }
    offset_seconds = std::int64_t{sign} * (std::int64_t{offset_hours} * 3600 + std::int64_t{offset_minutes} * 60);
  }
  if (!text.empty()) return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{month}, std::chrono::day{day}};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  auto days = std::chrono::sys_days{date}.time_since_epoch();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(days).count() + std::int64_t{hour} * 3600 +
                 std::int64_t{minute} * 60 + second - offset_seconds;
  if (seconds < 0) return std::nullopt;
  return static_cast<std::uint64_t>(seconds) * 1'000'000'000 + static_cast<std::uint64_t>(nanos);
}

}  // namespace

bool DumpFilter::matches(const DumpRecord& record) const {
  if (trace_id && record.trace_id != *trace_id) return false;
  if (direction && record.direction != *direction) return false;
  if (since_ns && record.ts < *since_ns) return false;
  if (until_ns && record.ts >= *until_ns) return false;
  if (!groups.empty() && std::find(groups.begin(), groups.end(), record.group) == groups.end()) return false;
  if (!messages.empty() &&
      std::none_of(messages.begin(), messages.end(), [&](const auto& m) { return message_matches(m, record); })) {
    return false;
  }
  return true;
}

Result<std::uint64_t, DumpArgumentError> parse_trace_id(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    return Err{DumpArgumentError(
        fmt::format("invalid trace id \"{}\": expected a decimal number as printed in logs and dumps", text))};
  }
  return value;
}

Result<std::uint64_t, DumpArgumentError> parse_time_bound(std::string_view text, std::uint64_t now_ns) {
  if (!text.empty() && text.front() == '-') {
    auto ago = parse_duration(text.substr(1));
    if (!ago) return Err{DumpArgumentError(ago.error().message())};
    auto ago_ns = static_cast<std::uint64_t>(ago->count());
    return ago_ns > now_ns ? 0 : now_ns - ago_ns;
  }
  std::uint64_t unix_ns = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), unix_ns);
  if (!text.empty() && ec == std::errc{} && end == text.data() + text.size()) return unix_ns;
  if (auto parsed = parse_rfc3339(text)) return *parsed;
  return Err{DumpArgumentError(fmt::format(
      "invalid time \"{}\": expected RFC 3339 (2026-11-22T10:00:00Z), unix nanoseconds, or a duration ago (-10m)",
      text))};
}

Result<Direction, DumpArgumentError> parse_direction(std::string_view text) {
  if (equal_ignoring_case(text, "in")) return Direction::In;
  if (equal_ignoring_case(text, "out")) return Direction::Out;
  return Err{DumpArgumentError(fmt::format("invalid direction \"{}\": expected \"in\" or \"out\"", text))};
}

}  // namespace elfin::dumper
