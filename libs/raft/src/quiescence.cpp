// Quiescence: an idle group stops ticking and heartbeating (node.hpp describes the handshake). The
// leader decides, and only when nothing could be lost by sleeping: every follower holds the
// leader's whole log (match == last index), all of it is committed in the leader's term and
// applied, no read, transfer or Append is pending, and the group was idle for quiesce_after_ticks
// ticks (CockroachDB found that groups quiescing at once flapped; each wake costs a heartbeat
// round). A lone voter has nobody to heartbeat: it quiesces once its log is applied (Core::ready),
// without idle ticks. Followers quiesce only at exactly the leader's last index, so a quiesced
// group is fully caught up everywhere; the leader sleeps only once every follower did. The
// exception is a follower whose node the application reported down (report_node_down): it cannot
// answer, so it would keep its group awake for as long as it is gone. The leader sleeps without it
// when the live, caught-up voters (itself included) are a quorum of every voter set, and wakes when
// the node is reported up, or anything comes from it, to catch it up.
#include <algorithm>

#include "core.hpp"
#include "quorum.hpp"

namespace elfin::raft::internal {

void Core::note_activity(bool heartbeat) {
  idle_ticks_ = 0;
  activity_stamp_ = ticks_;
  for (auto& [id, pr] : progress_) {
    pr.quiesced = false;
  }
  wake_up(heartbeat);
}

void Core::wake_up(bool heartbeat) {
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
    if (heartbeat) {
      bcast_heartbeat(read_only_.last_context());
    }
  }
}

bool Core::can_quiesce() const {
  if (config_.quiesce_after_ticks <= 0 || config_.read_mode == Config::ReadMode::Lease || role_ != Role::Leader ||
      (idle_ticks_ < config_.quiesce_after_ticks && !progress_.empty())) {
    return false;
  }
  if (transferee_ != 0 || !read_only_.empty() || deferred_append_ != 0 || received_snapshot_) {
    return false;
  }
  const Index last = log_.last_index();
  if (commit_ != last || log_.persisted() < last || applied_ != commit_ || !committed_in_term()) {
    return false;
  }
  const auto caught_up = [&](NodeId id) {
    if (id == config_.id) return true;
    auto it = progress_.find(id);
    return it != progress_.end() && !is_down(id) && it->second.match == last &&
           it->second.state != ProgressState::Snapshot;
  };
  const bool every_live_one = std::all_of(progress_.begin(), progress_.end(), [&](const auto& entry) {
    return is_down(entry.first) || caught_up(entry.first);
  });
  if (!every_live_one) {
    return false;
  }
  if (down_.empty()) {
    return true;
  }
  const auto quorum_of = [&](const std::vector<NodeId>& voters) {
    return voters.empty() ||
           majority_value(voters, [&](NodeId id) -> std::uint64_t { return caught_up(id) ? 1 : 0; }) == 1;
  };
  return quorum_of(conf_.voters) && quorum_of(conf_.voters_outgoing);
}

void Core::maybe_quiesce() {
  if (quiesced_ || !can_quiesce()) {
    return;
  }
  if (std::all_of(progress_.begin(), progress_.end(),
                  [&](const auto& entry) { return entry.second.quiesced || is_down(entry.first); })) {
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
  if (node == 0 || node == config_.id) {
    return;
  }
  down_.insert(node);
  if (!quiesced_ || role_ != Role::Follower || leader_ != node) {
    return;
  }
  quiesced_ = false;
  become_follower(term_, 0);  // no leader: votes are granted again
  // The liveness signal already waited about an election timeout: campaign after 1 to
  // election_tick ticks (randomized, so the surviving replicas rarely collide).
  election_elapsed_ = config_.election_tick - 1;
}

void Core::report_node_up(NodeId node) {
  if (down_.erase(node) == 0) {
    return;
  }
  // A leader that slept without it wakes: the node may have missed entries, or restarted.
  if (quiesced_ && role_ == Role::Leader && progress_.contains(node)) {
    wake_up();
  }
}

}  // namespace elfin::raft::internal
