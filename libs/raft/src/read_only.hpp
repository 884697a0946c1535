// A leader's linearizable reads in progress (ReadIndex, thesis 6.4). A read is recorded with the
// commit index at its arrival and an id of the leader's own (so contexts of different requesters
// never collide); heartbeats carry the newest id, and once a quorum echoes an id every read up to
// it is confirmed: no other leader existed when it arrived. Reads that arrive before the leader
// committed an entry of its term wait (the commit index might be stale until then).
//
// Thread safety: owned by one Core.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>

namespace elfin::raft::internal {

struct ReadRequest {
  Index index = 0;
  Bytes context;    ///< the requester's context
  NodeId from = 0;  ///< the requester (the leader itself for a local read)
  std::uint64_t id = 0;
  std::vector<NodeId> acks;
};

class ReadOnly {
 public:
  /// Records a read at `index`; returns the heartbeat context naming it.
  Bytes add(Index index, Bytes context, NodeId from);
  /// `from` echoed heartbeat context `context`. Returns the reads it confirms (oldest first),
  /// counting `self` as an ack.
  std::vector<ReadRequest> ack(const Bytes& context, NodeId from, NodeId self, const ConfState& conf);
  /// The heartbeat context of the newest pending read (empty: none).
  [[nodiscard]] Bytes last_context() const;
  [[nodiscard]] bool empty() const noexcept { return pending_.empty() && waiting_.empty(); }

  /// Reads waiting for the leader's first commit in its term.
  void wait_for_commit(Bytes context, NodeId from) {
    waiting_.push_back(ReadRequest{0, std::move(context), from, 0, {}});
  }
  std::deque<ReadRequest> take_waiting() { return std::exchange(waiting_, {}); }
  /// Everything pending or waiting (the leader stepped down: they are rejected).
  std::vector<ReadRequest> take_all();

 private:
  std::deque<ReadRequest> pending_;
  std::deque<ReadRequest> waiting_;
  std::uint64_t next_id_ = 1;
};

}  // namespace elfin::raft::internal
