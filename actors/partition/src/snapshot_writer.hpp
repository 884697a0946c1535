// The snapshot file writes a partition actor hands to the system's blocking pool
// (`ctx.blocking`): the actor takes the snapshot's bytes on its own thread, consistent with what
// it applied, and only the file write and its syncs run on the pool's thread.
//
// A test hook runs before each write, on the thread that writes: a test holds a write there to
// watch the partition go on meanwhile. It is set only by tests.
//
// Thread safety: `write_snapshot_file` from any thread (one caller per directory at a time, as
// write_snapshot requires); the hook is set while no write runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <elfin/protocols/raft.hpp>
#include <elfin/result.hpp>

namespace elfin::actors::partition::internal {

/// write_snapshot, after the test hook if one is set.
[[nodiscard]] Result<std::string, std::string> write_snapshot_file(const std::string& dir,
                                                                   const protocols::raft::Snapshot& snapshot);

/// Tests only: `hook(dir, index)` runs before every snapshot file write; empty: none.
void set_snapshot_write_hook(std::function<void(const std::string& dir, std::uint64_t index)> hook);

}  // namespace elfin::actors::partition::internal
