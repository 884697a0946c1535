// Quiescence: an idle group stops ticking and heartbeating (node.hpp describes the handshake).
// The leader decides, and only when nothing could be lost by sleeping: every follower holds the
// leader's whole log (match == last index), all of it is committed in the leader's term and
// applied, no read, transfer or Append is pending, and the group was idle for
// quiesce_after_ticks ticks (CockroachDB found that groups quiescing at once flapped; each wake
// costs a heartbeat round). Followers quiesce only at exactly the leader's last index, so a
// quiesced group is fully caught up everywhere; the leader sleeps only once every follower did.
#include <algorithm>

#include "core.hpp"

namespace elfin::raft::internal {

void Core::note_activity() {
  idle_ticks_ = 0;
  activity_stamp_ = ticks_;
  for (auto& [id, pr] : progress_) {
    pr.quiesced = false;
  }
  wake_up();
}

void Core::wake_up() {
  if (!quiesced_) {
    return;
  }
  quiesced_ = false;
  idle_ticks_ = 0;
  activity_stamp_ = ticks_;
  // Nothing was heard while asleep, and nothing was expected: count the timeouts from now.
  election_elapsed_ = 0;
  if (role_ == Role::Leader) {
    heartbeat_elapsed_ = 0;
    for (auto& [id, pr] : progress_) {
      pr.quiesced = false;
      pr.recent_active = false;  // check-quorum judges the followers on what they answer now
    }
    // Wakes the followers (a plain heartbeat is no quiescing handshake).
    bcast_heartbeat(read_only_.last_context());
  }
}

bool Core::can_quiesce() const {
  if (config_.quiesce_after_ticks <= 0 || config_.read_mode == Config::ReadMode::Lease || role_ != Role::Leader ||
      idle_ticks_ < config_.quiesce_after_ticks) {
    return false;
  }
  if (transferee_ != 0 || !read_only_.empty() || deferred_append_ != 0 || received_snapshot_) {
    return false;
  }
  const Index last = log_.last_index();
  if (commit_ != last || log_.persisted() < last || applied_ != commit_ || !committed_in_term()) {
    return false;
  }
  return std::all_of(progress_.begin(), progress_.end(), [&](const auto& entry) {
    const Progress& pr = entry.second;
    return pr.match == last && pr.state != ProgressState::Snapshot;
  });
}

void Core::maybe_quiesce() {
  if (quiesced_ || !can_quiesce()) {
    return;
  }
  if (std::all_of(progress_.begin(), progress_.end(), [](const auto& entry) { return entry.second.quiesced; })) {
    quiesced_ = true;
  }
}

bool Core::accept_quiesce(const Message& m) {
  // Only at exactly the leader's last index (nothing of another term left beyond it), with
  // quiescence enabled here too, and not in Lease mode (whose stickiness counts ticks).
  const bool ok = config_.quiesce_after_ticks > 0 && config_.read_mode != Config::ReadMode::Lease &&
                  role_ == Role::Follower && leader_ == m.from && log_.last_index() == m.commit && commit_ == m.commit;
  if (ok) {
    quiesced_ = true;
    election_elapsed_ = 0;
  } else {
    wake_up();  // asked again but no longer in step: stay awake
  }
  return ok;
}

void Core::report_node_down(NodeId node) {
  if (!quiesced_ || role_ != Role::Follower || node == 0 || leader_ != node) {
    return;
  }
  quiesced_ = false;
  become_follower(term_, 0);  // no leader: votes are granted again
  // The liveness signal already waited about an election timeout: campaign after 1 to
  // election_tick ticks (randomized, so the surviving replicas rarely collide).
  election_elapsed_ = config_.election_tick - 1;
}

}  // namespace elfin::raft::internal
