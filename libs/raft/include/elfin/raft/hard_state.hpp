// The state a replica must find again after a crash: its term, its vote in that term, and the
// commit index it knew (the commit index only saves re-learning it; term and vote are what Raft's
// safety rests on, so they must be durable before any message that depends on them leaves).
//
// Thread safety: a plain value type.
#pragma once

#include <elfin/raft/entry.hpp>

namespace elfin::raft {

struct HardState {
  Term term = 0;
  NodeId vote = 0;
  Index commit = 0;

  friend bool operator==(const HardState&, const HardState&) = default;
};

}  // namespace elfin::raft
