// What a WAL stores: records of a partition's log. `Record` is what the writer is given (the
// payload borrowed for the call); `Entry` is what recovery hands back (owning its payload).
//
// Each record belongs to a partition and carries a term and an index, so many partitions' logs
// (Raft logs, typically) share one file. Replay keeps, per partition, etcd's rule: a record whose
// index was seen before replaces that index and every later one, so stale entries never return.
//
// Thread safety: plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace elfin::wal {

/// A record to append. `type` is the caller's (0 is reserved by the format).
struct Record {
  std::uint16_t type = 1;
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
