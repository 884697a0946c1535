// A Raft log entry and the ids everything else is written in.
//
// Entries are plain values moved through the library: a proposal's bytes are moved into the log,
// and copies leave only where the log must keep its own (Ready::entries, Append messages,
// Ready::committed). An empty Normal entry is the no-op a new leader appends; the app skips it
// when applying. ConfChange entries carry an encoded ConfChange (conf_change.hpp).
//
// Thread safety: plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace elfin::raft {

/// A replica's id; 0 means "none". Never reuse the id of a removed node.
using NodeId = std::uint64_t;
using Term = std::uint64_t;
using Index = std::uint64_t;
/// Opaque bytes (the same type as protocols::wal::Payload).
using Bytes = std::vector<std::uint8_t>;

enum class EntryKind : std::uint8_t { Normal, ConfChange };

struct Entry {
  Term term = 0;
  Index index = 0;
  EntryKind kind = EntryKind::Normal;
  Bytes data;

  friend bool operator==(const Entry&, const Entry&) = default;
};

/// The size an entry counts for in byte limits (max_bytes_per_append, max_uncommitted_bytes):
/// its data plus a fixed overhead, so empty entries are not free.
[[nodiscard]] inline std::uint64_t entry_size(const Entry& entry) noexcept { return entry.data.size() + 24; }

}  // namespace elfin::raft
