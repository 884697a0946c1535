// The placement reconciler's rule (config `placement = "assignment"`): from a leader's membership
// and the partition's target replicas, the one next step toward the target, add before remove,
// so that the partition keeps `target.size()` durable copies throughout a move:
//
//   1. a target node that is no member        -> add it as a learner (it receives the log, or a
//                                                snapshot when the log it needs is compacted)
//   2. a target learner caught up              -> promote it to voter (not caught up: wait)
//   3. every target node votes; a learner that is no target -> remove it
//   4. a voter that is no target: this leader  -> hand leadership to the most caught-up target
//                                 another one  -> remove it
//
// Nothing while a joint configuration is in force or the target is empty (a shard placed nowhere
// for a moment: the manager unassigns before it assigns). The leader's Raft Node refuses a change
// while another is uncommitted, so the caller may simply ask again every few ticks.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>

namespace elfin::actors::partition::internal {

struct ReconcileStep {
  enum class Kind : std::uint8_t { None, AddLearner, Promote, TransferLeader, Remove };
  Kind kind = Kind::None;
  elfin::raft::NodeId node = 0;
  friend bool operator==(const ReconcileStep&, const ReconcileStep&) = default;
};

/// A learner is caught up when its match index is within this many entries of the leader's last.
inline constexpr std::uint64_t kCaughtUpSlack = 64;

/// The next step for leader `self` with membership `conf` toward `target`; `match` gives the
/// leader's view of a member's last replicated index (nullopt: not known).
[[nodiscard]] ReconcileStep next_step(
    const elfin::raft::ConfState& conf, const std::vector<elfin::raft::NodeId>& target, elfin::raft::NodeId self,
    const std::function<std::optional<elfin::raft::Index>(elfin::raft::NodeId)>& match, elfin::raft::Index last_index);

}  // namespace elfin::actors::partition::internal
