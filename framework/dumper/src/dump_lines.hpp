// Turning the lines of a dump file into records: shared by the sorting and the following reader.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include <elfin/dumper/dump_filter.hpp>
#include <elfin/dumper/dump_reader.hpp>
#include <elfin/dumper/dump_record.hpp>

namespace elfin::dumper::detail {

// Parses one line and applies the filter, keeping the counts; `on_record` gets the matching record.
template <class OnRecord>
void take_line(std::string_view line, const std::string& file, std::uint64_t line_no, const DumpFilter& filter,
               ReadStats& stats, const OnMalformed& on_malformed, OnRecord&& on_record) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank lines are not records
  ++stats.lines_read;
  auto record = parse_dump_line(line);
  if (!record) {
    ++stats.malformed;
    if (on_malformed) on_malformed(MalformedLine{file, line_no, record.error().message()});
    return;
  }
  if (!filter.matches(*record)) return;
  ++stats.matched;
  std::forward<OnRecord>(on_record)(std::move(*record));
}

// The error for a dump file that failed to open or read, with errno's reason.
inline DumpReadError os_error(DumpReadError::Kind kind, const std::string& file) {
  const std::error_code code(errno, std::generic_category());
  return DumpReadError(
      kind, fmt::format("{}: cannot {}: {}", file, kind == DumpReadError::Open ? "open" : "read", code.message()), file,
      code);
}

}  // namespace elfin::dumper::detail
