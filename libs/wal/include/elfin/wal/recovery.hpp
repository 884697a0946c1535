// Recovery: replays every segment of one WAL in order and returns each partition's log, the state
// the writer continues from, and what was repaired. A WAL is opened only through this, so nothing
// is appended before the log on disk was read and classified.
//
// Rules (segment_scan.hpp classifies each segment):
//   - Segments must be numbered consecutively and each header's first sequence must continue the
//     segment before; otherwise a Gap error. Nothing after a gap is replayed.
//   - A torn tail of the LAST segment is cut at the end of the last valid record, after a copy of
//     the file was written beside it (`<name>.damaged`). A last segment shorter than its header is
//     moved aside the same way (it held no record: its header is synced before it gets a name).
//   - Damage anywhere else, or damage followed by a later batch, is a CorruptRecord error naming
//     the segment file, the byte offset and the partition. Nothing is cut or dropped.
//   - A read error is a ReadFailed error: nothing is truncated or deleted.
//   - Within a partition, a record whose index was seen before replaces that index and all later
//     ones (etcd's rule), so entries a new leader overwrote never come back. A truncate record
//     drops the entries after its index; a hard-state record is no entry: the latest one of each
//     partition is returned apart (record.hpp).
//   - Leftover `<segment>.tmp` files (a rotation that did not finish) are deleted.
// Recovery is idempotent: running it again (after a crash during it, too) gives the same log.
//
// Thread safety: one call at a time per directory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/wal/error.hpp>
#include <elfin/wal/file_system.hpp>
#include <elfin/wal/hard_state.hpp>
#include <elfin/wal/record.hpp>

namespace elfin::wal {

struct RecoveryOptions {
  std::string dir;                              ///< the WAL's directory (created if missing when `repair`)
  std::uint32_t wal_id = 0;                     ///< which WAL of the directory
  std::uint32_t wal_count = 1;                  ///< must match the segments' headers: partitions are placed by it
  std::uint64_t max_payload_bytes = 16u << 20;  ///< larger lengths are damage
  bool repair = true;                           ///< false: report a torn tail in `repairs` but change nothing
  bool keep_entries = true;                     ///< false: return the ranges only (inspection of large logs)
};

/// First and last index of a partition's records, and how many there are.
struct IndexRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t records = 0;
  friend bool operator==(const IndexRange&, const IndexRange&) = default;
};

/// One segment as recovery (and then the writer) knows it.
struct SegmentInfo {
  std::uint64_t segment_no = 0;
  std::string path;
  std::uint64_t first_sequence = 0;
  std::uint64_t records = 0;
  std::uint64_t end_offset = 0;                    ///< where the next record goes
  std::map<std::uint64_t, IndexRange> partitions;  ///< index range of each partition's records here
};

/// Where the log ends: what `Writer::open` continues from.
struct LogState {
  std::string dir;
  std::uint32_t wal_id = 0;
  std::uint32_t wal_count = 1;
  std::vector<SegmentInfo> segments;  ///< oldest first
  std::uint64_t next_sequence = 0;
  std::uint64_t next_segment_no = 0;  ///< the number of the segment a rotation creates
  /// False when recovery ran with `repair = false` and found a tail to cut: appending after it
  /// would leave the torn bytes behind the new records, so Writer::open refuses.
  bool writable = true;
};

struct Repair {
  enum class Kind : std::uint8_t { TornTail, ShortHeader };
  Kind kind = Kind::TornTail;
  std::string path;
  std::uint64_t offset = 0;  ///< cut here (ShortHeader: the file was moved aside)
  std::uint64_t bytes_cut = 0;
  std::string damaged_copy;  ///< the copy kept ("" when `repair` was off)
  std::string_view what;     ///< the check that failed
};

struct Recovery {
  std::map<std::uint64_t, std::vector<Entry>> partitions;  ///< each partition's log, by index
  std::map<std::uint64_t, IndexRange> ranges;              ///< each partition's index range after replay
  std::map<std::uint64_t, HardState> hard_states;          ///< each partition's latest hard state
  std::map<std::uint64_t, std::uint64_t> checkpoints;      ///< each partition's highest checkpoint
  LogState log;
  std::vector<Repair> repairs;
  std::uint64_t records_read = 0;
};

[[nodiscard]] WalResult<Recovery> recover(FileSystem& fs, const RecoveryOptions& options);

/// Reads a whole file through the file layer (ReadFailed on an error).
[[nodiscard]] WalResult<std::vector<std::byte>> read_whole_file(FileSystem& fs, const std::string& path);

/// The wal_count `dir`'s segments were created with (of WAL `wal_id`'s segments only, when given):
/// the first segment header that checks out says it. nullopt when no segment has one (a new or
/// missing directory). For tools that must agree with a directory recovery would refuse otherwise.
[[nodiscard]] std::optional<std::uint32_t> stored_wal_count(FileSystem& fs, const std::string& dir,
                                                            std::optional<std::uint32_t> wal_id = std::nullopt);

}  // namespace elfin::wal
