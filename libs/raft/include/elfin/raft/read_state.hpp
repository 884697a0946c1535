// The answer to Node::read_index: the read with this context may be served from the state machine
// once the application has applied every entry up to `index`. A rejected read (no leader, the
// leader stepped down, a lease that cannot be used and no quorum) has `rejected` set and index 0:
// retry it later. Reads forwarded to a leader that is lost on the way are never answered; the
// application times them out.
//
// Thread safety: a plain value type.
#pragma once

#include <elfin/raft/entry.hpp>

namespace elfin::raft {

struct ReadState {
  Index index = 0;
  Bytes context;
  bool rejected = false;
};

}  // namespace elfin::raft
