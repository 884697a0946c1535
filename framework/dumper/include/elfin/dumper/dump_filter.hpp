// DumpFilter: which dump records `elfin dump` keeps — by trace, group, message, time and direction.
//
// Every set criterion must match; a list criterion (groups, messages) matches any of its entries.
// A message pattern is a bare name ("Increment") or "protocol.Name" ("counter.Increment").
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/dumper/dump_argument_error.hpp>
#include <elfin/dumper/dump_record.hpp>
#include <elfin/logging.hpp>
#include <elfin/result.hpp>

namespace elfin::dumper {

struct DumpFilter {
  std::optional<std::uint64_t> trace_id;
  std::vector<std::string> groups;
  std::vector<std::string> messages;
  std::optional<std::uint64_t> since_ns;  // inclusive, unix nanoseconds
  std::optional<std::uint64_t> until_ns;  // exclusive
  std::optional<Direction> direction;

  [[nodiscard]] bool matches(const DumpRecord& record) const;
};

/// A trace id as written in dumps and logs (decimal).
[[nodiscard]] Result<std::uint64_t, DumpArgumentError> parse_trace_id(std::string_view text);
/// A time bound: RFC 3339 ("2026-11-22T10:00:00Z", fractions and "+02:00" offsets allowed), unix
/// nanoseconds, or a duration before `now_ns` written with a minus sign ("-10m").
[[nodiscard]] Result<std::uint64_t, DumpArgumentError> parse_time_bound(std::string_view text, std::uint64_t now_ns);
/// "in" / "out" (any case).
[[nodiscard]] Result<Direction, DumpArgumentError> parse_direction(std::string_view text);
/// Timestamps print as log lines do.
using elfin::format_timestamp;

}  // namespace elfin::dumper
