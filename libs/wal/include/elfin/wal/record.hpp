// What a WAL stores: records of a partition's log. `Record` is what the writer is given (the
// payload borrowed for the call); `Entry` is what recovery hands back (owning its payload).
//
// Each record belongs to a partition and carries a term and an index, so many partitions' logs
// (Raft logs, typically) share one file. Replay keeps, per partition, etcd's rule: a record whose
// index was seen before replaces that index and every later one, so stale entries never return.
//
// Four record types have a meaning recovery knows (`record_type`); any other non-zero type is an
// entry of the caller's kind. A hard-state record is not part of the log: it is the partition's
// Raft term, vote and commit, the latest one winning (hard_state.hpp encodes its payload). Nor is
// a checkpoint record: it says the partition no longer needs its entries up to `index`, so
// recovery drops them and a restart remembers what may be retired.
//
// Thread safety: plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace elfin::wal {

/// The record types recovery interprets (0 is reserved: an all-zero header ends the records).
namespace record_type {
/// An entry of the partition's log at `index` (term `term`).
inline constexpr std::uint16_t kEntry = 1;
/// "The partition's entries after `index` are gone" (a Raft log conflict), durable like an entry.
inline constexpr std::uint16_t kTruncate = 2;
/// The partition's hard state (term, vote, commit) in the payload; `index` is 0, `term` the term.
inline constexpr std::uint16_t kHardState = 3;
/// "The partition's entries up to `index` are no longer needed" (its state is saved elsewhere);
/// no payload, `term` 0. The highest one wins.
inline constexpr std::uint16_t kCheckpoint = 4;
}  // namespace record_type

/// A record to append. `type` is one of `record_type` or the caller's own (never 0).
struct Record {
  std::uint16_t type = record_type::kEntry;
  std::uint64_t partition = 0;
  std::uint64_t term = 0;
  std::uint64_t index = 0;
  std::span<const std::byte> payload;
};

/// A record read back by recovery.
struct Entry {
  std::uint16_t type = 0;
  std::uint64_t term = 0;
  std::uint64_t index = 0;
  std::uint64_t sequence = 0;  ///< its position in the WAL (0, 1, 2, ... over all partitions)
  std::vector<std::byte> payload;

  friend bool operator==(const Entry&, const Entry&) = default;
};

}  // namespace elfin::wal
