// Sorting dump files larger than memory: an external merge sort of the matching records.
//
// The files are read once, line by line. Matching records are kept until they take
// `memory_budget` bytes; then they are sorted and written to an unlinked temporary file (a run),
// and reading goes on. Handing the records over merges the runs and what is still in memory,
// holding one record per run. When there are more runs than `max_open_runs`, groups of them are
// first merged into longer runs, so open files stay bounded too. Input that fits the budget never
// touches the disk, and the files are never loaded whole.
//
// The order is `sort_by_time`'s (time, then group, then sequence number); records equal in all
// three keep their reading order (file order, then line order), as a stable sort would.
//
// Thread safety: none needed; a SortedDumps is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <elfin/dumper/dump_reader.hpp>

namespace elfin::dumper {

struct SortOptions {
  /// Bytes of records held in memory before a run is written out (estimated from their sizes).
  std::uint64_t memory_budget = std::uint64_t{256} << 20;
  /// Where runs go; empty: $TMPDIR, else /tmp. The files are unlinked at once, so nothing is left
  /// behind, even after a crash.
  std::string temp_dir;
  /// Runs merged at once; more are merged in rounds.
  std::size_t max_open_runs = 64;
  /// Called for each matching record as it is read (before sorting), e.g. to fit a table's widths.
  std::function<void(const DumpRecord&)> on_match;
};

/// The matching records of some dump files, sorted, ready to be handed over once.
class SortedDumps {
 public:
  struct State;
  explicit SortedDumps(std::unique_ptr<State> state);
  SortedDumps(SortedDumps&&) noexcept;
  SortedDumps& operator=(SortedDumps&&) noexcept;
  ~SortedDumps();

  /// Hands over every record in order; a second call hands over nothing. Fails only when a run
  /// cannot be read back from its temporary file.
  [[nodiscard]] Result<void, DumpReadError> for_each(const std::function<void(const DumpRecord&)>& on_record);

  /// Runs written to temporary files while reading (0 when everything fit the budget).
  [[nodiscard]] std::size_t spilled_runs() const;

 private:
  std::unique_ptr<State> state_;
};

/// Reads `files` and sorts the records `filter` matches within `options.memory_budget`. Fails when
/// a file cannot be opened or read, or a temporary file cannot be created or written (the error
/// names it).
[[nodiscard]] Result<SortedDumps, DumpReadError> sort_dumps(const std::vector<std::string>& files,
                                                            const DumpFilter& filter, ReadStats& stats,
                                                            const OnMalformed& on_malformed, SortOptions options = {});

}  // namespace elfin::dumper
