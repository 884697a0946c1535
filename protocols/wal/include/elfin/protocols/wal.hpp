// The WAL actors' protocol: what a partition asks of the write-ahead log it shares with other
// partitions, and the answers. Partition p is served by WAL actor `p % wal_count`; the group's
// router places every request below by its `partition` field.
//
//   Append / AppendBatch  entries of one partition's log -> Appended (the partition's durable index)
//   TruncateAfter         drop the partition's entries after an index (a Raft log conflict)
//   SaveHardState         the partition's Raft term, vote and commit, durable and ordered with its
//                         entries (ReadRange's `Range` gives the latest back)
//   Checkpoint            the partition's state up to an index is saved elsewhere: its entries up
//                         to there are no longer needed, and segments holding nothing else go
//   ReadRange             read entries back (a partition starting up)
//   Flush                 write out what the WAL collected now, without waiting for more
//   GetStats              the counters of the WAL actor serving a partition
//
// Every answer but GetStats's is `elfin::Result<T, WalError>`. An `Appended` is sent only after
// the fdatasync that covers the entries returned: an acknowledged entry survives a crash or a
// power loss.
// Appending an index at or below the partition's last one replaces that index and every later
// one (the Raft rule: stale entries never come back); an index past `last + 1` is refused.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::wal {

using PartitionId = std::uint64_t;
/// An entry's contents, as the partition wrote them (msgpack `bin`).
using Payload = std::vector<std::uint8_t>;

/// One entry of a partition's log.
struct Entry {
  std::uint64_t term = 0;
  std::uint64_t index = 0;
  Payload payload;
  ELFIN_PART(term, index, payload);
  friend bool operator==(const Entry&, const Entry&) = default;
};

/// Why a request was refused; what the partition can do about it.
enum class WalErrorKind : std::uint8_t {
  NoSpace,       ///< the disk is full: the batch was rolled back (nothing of it is on disk); retry later
  WriteFailed,   ///< a write (or creating a new segment) failed: rolled back like NoSpace; retry later
  WalFailed,     ///< an fdatasync failed (or a failed write could not be rolled back), now or
                 ///< earlier: the WAL accepts nothing until it restarts
                 ///< and recovers what is on disk (a retried fsync could "succeed" without the data)
  ShuttingDown,  ///< the WAL actor is terminating; everything acknowledged before stays durable
  StartFailed,   ///< recovery failed (damage, a read error, a wal_count mismatch); `detail` says where
  OutOfOrder,    ///< an index past `last + 1`, or entries that do not follow each other
  TooLarge,      ///< a payload over the configured `max_payload_bytes`
};

struct WalError {
  WalErrorKind kind = WalErrorKind::WalFailed;
  PartitionId partition = 0;
  std::uint64_t expected_index = 0;  ///< OutOfOrder: the next index the WAL would accept
  std::string detail;                ///< the underlying error, for people (file, offset, errno)
  ELFIN_PART(kind, partition, expected_index, detail);
  friend bool operator==(const WalError&, const WalError&) = default;
};

/// The partition's log is durable up to `index` (whose entry has `term`).
struct Appended {
  PartitionId partition = 0;
  std::uint64_t index = 0;
  std::uint64_t term = 0;
  ELFIN_PART(partition, index, term);
  friend bool operator==(const Appended&, const Appended&) = default;
};

/// One entry.
struct Append {
  PartitionId partition = 0;
  std::uint64_t term = 0;
  std::uint64_t index = 0;
  Payload payload;
  ELFIN_REQUEST(wal, Append, (elfin::Result<Appended, WalError>), partition, term, index, payload);
};

/// Consecutive entries of one partition (indexes `e[0].index`, `e[0].index + 1`, ...), written in
/// the same batch: all of them are acknowledged, or none.
struct AppendBatch {
  PartitionId partition = 0;
  std::vector<Entry> entries;
  ELFIN_REQUEST(wal, AppendBatch, (elfin::Result<Appended, WalError>), partition, entries);
};

/// Drops the partition's entries after `index`, durably (a record in the WAL); answered with
/// `Appended{partition, index}` once that record is synced.
struct TruncateAfter {
  PartitionId partition = 0;
  std::uint64_t index = 0;
  ELFIN_REQUEST(wal, TruncateAfter, (elfin::Result<Appended, WalError>), partition, index);
};

/// A partition's Raft hard state: what must be durable before a message of a new term goes out.
struct HardState {
  std::uint64_t term = 0;
  std::uint64_t vote = 0;    ///< the node voted for in `term` (0: none)
  std::uint64_t commit = 0;  ///< the commit index known when it was saved
  ELFIN_PART(term, vote, commit);
  friend bool operator==(const HardState&, const HardState&) = default;
};

/// Saves the partition's hard state durably, in order with its entries: answered with
/// `Appended{partition, last index, its term}` once the fdatasync covering the record (and every
/// entry of the partition requested before it) returned. The latest one saved is what
/// `ReadRange` returns after a restart; checkpoints never drop it.
struct SaveHardState {
  PartitionId partition = 0;
  HardState state;
  ELFIN_REQUEST(wal, SaveHardState, (elfin::Result<Appended, WalError>), partition, state);
};

/// `Checkpoint` is answered once the WAL forgot the entries and deleted what it could.
struct Checkpointed {
  PartitionId partition = 0;
  std::uint64_t index = 0;
  std::uint64_t segments_retired = 0;  ///< segment files deleted by this checkpoint
  ELFIN_PART(partition, index, segments_retired);
  friend bool operator==(const Checkpointed&, const Checkpointed&) = default;
};

/// The partition keeps its state up to `index` durably elsewhere (a snapshot): the WAL may drop
/// its entries up to there. The checkpoint is durable: after a restart, reads still start after
/// it and it still counts when segments are retired.
struct Checkpoint {
  PartitionId partition = 0;
  std::uint64_t index = 0;
  ELFIN_REQUEST(wal, Checkpoint, (elfin::Result<Checkpointed, WalError>), partition, index);
};

/// Entries `from..to` (inclusive) of a partition, as far as they exist, oldest first.
struct Range {
  PartitionId partition = 0;
  std::uint64_t first_index = 0;  ///< the partition's first entry the WAL holds (0: none)
  std::uint64_t last_index = 0;   ///< its last durable entry (0: none)
  std::uint64_t last_term = 0;
  std::vector<Entry> entries;
  HardState hard_state;  ///< the latest SaveHardState acknowledged (all zero: none)
  ELFIN_PART(partition, first_index, last_index, last_term, entries, hard_state);
};

/// Reads entries back; stops early after `max_bytes` of payload (at least one entry; 0: no limit).
/// Entries not yet acknowledged are not returned.
struct ReadRange {
  PartitionId partition = 0;
  std::uint64_t from = 0;
  std::uint64_t to = UINT64_MAX;
  std::uint64_t max_bytes = 0;
  ELFIN_REQUEST(wal, ReadRange, (elfin::Result<Range, WalError>), partition, from, to, max_bytes);
};

/// The counters of one WAL actor.
struct WalStats {
  std::uint32_t wal_id = 0;
  std::uint64_t appends = 0;  ///< entries acknowledged
  std::uint64_t batches = 0;  ///< commits that wrote records
  std::uint64_t syncs = 0;    ///< fdatasyncs of segment files
  std::uint64_t bytes = 0;    ///< bytes written by commits (headers and padding included)
  std::uint64_t segments = 0;
  std::uint64_t pending = 0;  ///< entries admitted and not yet answered
  bool failed = false;
  ELFIN_PART(wal_id, appends, batches, syncs, bytes, segments, pending, failed);
};

/// Writes what the WAL serving `partition` collected now and answers once everything it received
/// before is durable.
struct Flush {
  PartitionId partition = 0;
  ELFIN_REQUEST(wal, Flush, (elfin::Result<WalStats, WalError>), partition);
};

/// The counters of the WAL actor serving `partition`.
struct GetStats {
  PartitionId partition = 0;
  ELFIN_REQUEST(wal, GetStats, WalStats, partition);
};

[[nodiscard]] std::string_view to_string(WalErrorKind kind);
/// "NoSpace (partition 3): <detail>".
[[nodiscard]] std::string to_string(const WalError& error);

}  // namespace elfin::protocols::wal

MSGPACK_ADD_ENUM(elfin::protocols::wal::WalErrorKind);

ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::Append);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::AppendBatch);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::TruncateAfter);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::SaveHardState);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::Checkpoint);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::ReadRange);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::Flush);
ELFIN_EXTERN_MESSAGE(elfin::protocols::wal::GetStats);

template <>
struct fmt::formatter<elfin::protocols::wal::WalErrorKind> : fmt::formatter<std::string_view> {
  auto format(elfin::protocols::wal::WalErrorKind kind, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::protocols::wal::to_string(kind), ctx);
  }
};

template <>
struct fmt::formatter<elfin::protocols::wal::WalError> : fmt::formatter<std::string_view> {
  auto format(const elfin::protocols::wal::WalError& error, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::protocols::wal::to_string(error), ctx);
  }
};
