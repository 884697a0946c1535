// Store: one WAL's files as its I/O thread sees them — the libs/wal writer, plus an index of
// where each partition's entries are on disk so that `ReadRange` can read them back without
// keeping payloads in memory.
//
// Records of four types go into the segments (libs/wal's record_type):
//   kEntryType      an entry of a partition's log; an index seen before replaces that index and
//                   every later one (the rule recovery applies, so stale entries never return)
//   kTruncateType   "entries after `index` are gone" (TruncateAfter), durable like an entry
//   kHardStateType  the partition's term, vote and commit (SaveHardState); the latest wins
//   kCheckpointType "entries up to `index` are no longer needed" (Checkpoint); the highest wins
// The index keeps, per partition, (index, term, segment, offset, length) of every entry after
// the partition's checkpoint, and its latest hard state and checkpoint with the segment holding
// each. A checkpoint is written before it deletes anything, so a restart still knows which
// segments may go and where reads start. Since deleting a segment could take a partition's latest
// hard state or checkpoint with it, each checkpoint first writes those held by older segments
// again (into the newest segment, which is never deleted), in the same commit as its own record.
//
// Opening runs libs/wal's recovery (torn tails cut, damage refused, `.tmp` files removed) and
// refuses a directory that holds segments of a WAL id at or past `wal_count`: those partitions
// were placed by another count.
//
// Thread safety: used by its I/O thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <elfin/protocols/wal.hpp>
#include <elfin/wal/error.hpp>
#include <elfin/wal/file_system.hpp>
#include <elfin/wal/hard_state.hpp>
#include <elfin/wal/record.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/writer.hpp>

namespace elfin::actors::wal::internal {

inline constexpr std::uint16_t kEntryType = elfin::wal::record_type::kEntry;
inline constexpr std::uint16_t kTruncateType = elfin::wal::record_type::kTruncate;
inline constexpr std::uint16_t kHardStateType = elfin::wal::record_type::kHardState;
inline constexpr std::uint16_t kCheckpointType = elfin::wal::record_type::kCheckpoint;

struct StoreOptions {
  std::string dir;
  std::uint32_t wal_id = 0;
  std::uint32_t wal_count = 1;
  elfin::wal::WriterOptions writer;
};

/// Where a partition's log stands (what the actor checks appends against).
struct PartitionEnd {
  std::uint64_t last_index = 0;  ///< 0: no entry
  std::uint64_t last_term = 0;
};

class Store {
 public:
  [[nodiscard]] static elfin::wal::WalResult<std::unique_ptr<Store>> open(elfin::wal::FileSystem& fs,
                                                                          const StoreOptions& options);

  /// Appends `records` and commits them: one write, one fdatasync (see Writer::commit).
  [[nodiscard]] elfin::wal::WalResult<elfin::wal::Durable> commit(std::span<const elfin::wal::Record> records);
  /// Entries from..to of `partition` read back from the segments, checked against their CRC.
  [[nodiscard]] elfin::wal::WalResult<protocols::wal::Range> read(const protocols::wal::ReadRange& request);
  /// Forgets the partition's entries up to `index` and deletes the segments nobody needs;
  /// returns how many were deleted.
  [[nodiscard]] elfin::wal::WalResult<std::uint64_t> checkpoint(protocols::wal::PartitionId partition,
                                                                std::uint64_t index);

  /// Each partition's last entry, as recovered (for the actor, after `open`).
  [[nodiscard]] std::map<protocols::wal::PartitionId, PartitionEnd> ends() const;
  [[nodiscard]] std::uint64_t segments() const { return writer_.log().segments.size(); }
  [[nodiscard]] bool failed() const { return writer_.failed(); }

 private:
  struct Location {
    std::uint64_t index = 0;
    std::uint64_t term = 0;
    std::uint64_t segment_no = 0;
    std::uint64_t offset = 0;
    std::uint32_t payload_len = 0;
  };
  struct Log {
    std::vector<Location> entries;  ///< by index, consecutive, after the checkpoint
    std::uint64_t last_index = 0;   ///< kept when the checkpoint dropped every entry
    std::uint64_t last_term = 0;
  };

  struct SavedHardState {
    elfin::wal::HardState state;
    std::uint64_t segment_no = 0;
  };

  Store(elfin::wal::FileSystem& fs, StoreOptions options, elfin::wal::Writer writer);
  void index_record(std::uint16_t type, std::uint64_t partition, const Location& location,
                    std::span<const std::byte> payload);
  /// Writes `partition`'s checkpoint record, with every hard state and checkpoint held by a
  /// segment older than the newest one written again, in one commit.
  [[nodiscard]] elfin::wal::WalResult<void> write_checkpoint(protocols::wal::PartitionId partition,
                                                             std::uint64_t index);
  [[nodiscard]] elfin::wal::WalResult<void> build_index();
  [[nodiscard]] const elfin::wal::SegmentInfo* segment(std::uint64_t segment_no) const;

  elfin::wal::FileSystem* fs_;
  StoreOptions options_;
  elfin::wal::Writer writer_;
  std::unordered_map<std::uint64_t, Log> logs_;
  std::map<std::uint64_t, std::uint64_t> checkpoints_;
  std::unordered_map<std::uint64_t, std::uint64_t> checkpoint_segments_;  ///< the segment of each one's record
  std::unordered_map<std::uint64_t, SavedHardState> hard_states_;
};

}  // namespace elfin::actors::wal::internal
