// Reading dump files: whole files merged and sorted by time, or one growing file followed.
//
// A line that is not a dump record is reported (file, line number, why) and skipped; reading goes
// on. Lines of one file may be out of order (threads record into separate shards), so a merged read
// sorts by `ts`, then group and sequence number, which keeps one group's own order stable.
//
// Thread safety: none needed; each call owns its files.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/dumper/dump_filter.hpp>
#include <elfin/dumper/dump_read_error.hpp>
#include <elfin/dumper/dump_record.hpp>
#include <elfin/result.hpp>

namespace elfin::dumper {

struct ReadStats {
  std::uint64_t lines_read = 0;
  std::uint64_t matched = 0;
  std::uint64_t malformed = 0;
};

struct MalformedLine {
  std::string file;
  std::uint64_t line_no = 0;
  std::string reason;
};

using OnMalformed = std::function<void(const MalformedLine&)>;

/// Reads every file, keeps the records `filter` matches, sorted by time, all in memory (files
/// larger than memory: elfin/dumper/dump_sort.hpp). Fails only when a file cannot be opened or
/// read (the error names it).
[[nodiscard]] Result<std::vector<DumpRecord>, DumpReadError> read_dumps(const std::vector<std::string>& files,
                                                                        const DumpFilter& filter, ReadStats& stats,
                                                                        const OnMalformed& on_malformed);

/// Orders records by time; ties by group, then sequence number.
void sort_by_time(std::vector<DumpRecord>& records);

struct FollowOptions {
  std::chrono::milliseconds poll_interval{200};
  bool from_start = true;                               // false: only lines appended after the call
  std::function<void(std::string_view why)> on_reopen;  // the file was rotated or truncated
};

/// Tails `file` like `tail -F`: hands over every matching record as its line completes, reopens the
/// file when it is replaced or truncated (logrotate), and returns when `stop` becomes true.
[[nodiscard]] Result<void, DumpReadError> follow_dump(const std::string& file, const DumpFilter& filter,
                                                      ReadStats& stats, const OnMalformed& on_malformed,
                                                      const std::function<void(const DumpRecord&)>& on_record,
                                                      const std::atomic<bool>& stop, FollowOptions options = {});

}  // namespace elfin::dumper
