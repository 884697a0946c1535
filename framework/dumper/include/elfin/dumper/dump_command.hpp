// `elfin dump`: reading dump files from the command line — merge, sort, filter, print.
//
//   elfin dump node1.dump node2.dump --trace 7226239398017728512
//   elfin dump app.dump --group counters --message counter.Increment --since -10m --json | jq .m
//   elfin dump app.dump --follow --direction in
//
// Malformed lines are reported on stderr with file and line number and skipped; a summary line
// (lines read, matched, malformed) ends every run. The command lives here, not in the CLI, so any
// binary built on elfin (and the tests) can run it.
//
// Thread safety: run_dump_command may be stopped from another thread through `stop`.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/dumper/dump_filter.hpp>
#include <elfin/dumper/dump_sort.hpp>
#include <elfin/result.hpp>

namespace elfin::dumper {

struct DumpCommand {
  std::vector<std::string> files;
  DumpFilter filter;
  bool json = false;
  bool follow = false;
  bool help = false;
  /// Bytes of records held in memory while sorting (`--memory`); see elfin/dumper/dump_sort.hpp.
  std::uint64_t memory_budget = SortOptions{}.memory_budget;
};

/// Parses the arguments after `dump`; `now_ns` anchors relative times ("--since -10m").
[[nodiscard]] Result<DumpCommand, DumpArgumentError> parse_dump_command(const std::vector<std::string_view>& args,
                                                                        std::uint64_t now_ns);

/// Runs the command: records to `out`, problems and the summary to `err`. Exit code 0, or 1 when a
/// file cannot be read. `--follow` runs until `stop` becomes true.
[[nodiscard]] int run_dump_command(const DumpCommand& command, std::FILE* out, std::FILE* err,
                                   const std::atomic<bool>& stop);

}  // namespace elfin::dumper
