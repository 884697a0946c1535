// A snapshot: the application's state machine as of `meta.index` (term `meta.term`) and the
// membership at that point. The library never looks inside `data`; it only carries it from the
// leader's snapshot_source to a lagging follower's Ready::snapshot.
//
// Thread safety: plain value types.
#pragma once

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>

namespace elfin::raft {

struct SnapshotMeta {
  Index index = 0;
  Term term = 0;
  ConfState conf;

  friend bool operator==(const SnapshotMeta&, const SnapshotMeta&) = default;
};

struct Snapshot {
  SnapshotMeta meta;
  Bytes data;

  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

}  // namespace elfin::raft
