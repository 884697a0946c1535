// DumpTable: dump records as an aligned table for people (`elfin dump` without --json).
//
//   TIME                      DIR  NODE  GROUP/KEY    TRACE                KIND     MESSAGE            BODY
//   2026-11-22T10:00:00.123Z  In   1     counters/42  7226239398017728512  req#12   counter.GetValue   {}
//
// Column widths fit the records given to `fit` or `widen` (capped, longer cells are cut with "…"), so a table of
// a merged read lines up; a followed file uses the widths of the header.
//
// Thread safety: a plain value type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <elfin/dumper/dump_record.hpp>

namespace elfin::dumper {

class DumpTable {
 public:
  DumpTable();
  /// Widths that fit every record (within the caps).
  [[nodiscard]] static DumpTable fit(const std::vector<DumpRecord>& records);
  /// Widths of the headers alone, for `widen` to grow record by record (a streamed read).
  [[nodiscard]] static DumpTable headers_only();
  /// Grows the widths to fit `record` (within the caps).
  void widen(const DumpRecord& record);

  void append_header(std::string& out) const;
  void append_row(const DumpRecord& record, std::string& out) const;

 private:
  std::size_t group_width_;
  std::size_t trace_width_;
  std::size_t kind_width_;
  std::size_t message_width_;
};

}  // namespace elfin::dumper
