// Snapshot files: a partition's state machine saved up to a log index, written atomically so a
// crash leaves either the old snapshot or the new one, never half of one.
//
//   <dir>/snapshot-<index:016x>-<term:016x>.snap
//   | magic "ELFINSNP" | version u32 | crc32c u32 (of the body) | body_len u64 | body (msgpack) |
//
// The body is a protocols::raft::Snapshot (index, term, configuration, state machine bytes).
// Writing: `<name>.tmp`, write, fdatasync, rename to `<name>`, fsync the directory; then the
// older snapshots are deleted. Loading takes the newest valid name and checks magic, length and
// CRC: a damaged newest snapshot is an error (the log before it may be gone), not a fallback.
//
// Thread safety: one caller per directory at a time (the partition's actor).
#pragma once

#include <optional>
#include <string>

#include <elfin/protocols/raft.hpp>
#include <elfin/result.hpp>

namespace elfin::actors::partition {

/// Writes `snapshot` into `dir` (created if missing) durably, then removes older snapshots.
/// The error says which file operation failed.
[[nodiscard]] Result<std::string, std::string> write_snapshot(const std::string& dir,
                                                              const protocols::raft::Snapshot& snapshot);

/// The newest snapshot in `dir` (nullopt: none, or no directory); leftover `.tmp` files are removed.
[[nodiscard]] Result<std::optional<protocols::raft::Snapshot>, std::string> load_latest_snapshot(
    const std::string& dir);

}  // namespace elfin::actors::partition
