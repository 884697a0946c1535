// What the application read back at start (its WAL and its latest snapshot file), given to the
// Node's constructor. A replica that never persisted anything passes the group's initial
// configuration in `conf` (the same on every initial replica) or an empty one when it joins an
// existing group (it learns the membership from the leader's log or snapshot).
//
// Thread safety: a plain value type.
#pragma once

#include <optional>
#include <vector>

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>
#include <elfin/raft/hard_state.hpp>
#include <elfin/raft/snapshot.hpp>

namespace elfin::raft {

struct Recovered {
  HardState hard_state;
  std::optional<SnapshotMeta> snapshot;
  /// The durable log, in index order and contiguous; entries at or below the snapshot's index are
  /// skipped.
  std::vector<Entry> entries;
  /// Initial configuration when no snapshot exists; ConfChange entries of the log up to the
  /// durable commit index are applied on top.
  ConfState conf;
  /// The state machine's applied index (the snapshot's, normally): entries after it up to the
  /// commit index are handed out again in Ready::committed.
  Index applied = 0;
};

}  // namespace elfin::raft
