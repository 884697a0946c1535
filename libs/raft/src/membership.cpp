// Proposals, single-server membership changes and leadership transfer.
#include <algorithm>
#include <utility>

#include "core.hpp"

namespace elfin::raft::internal {

ProposeResult Core::propose(Bytes data) {
  if (role_ != Role::Leader) {
    return ProposeRejected{ProposeError::NotLeader, leader_};
  }
  if (transferee_ != 0) {
    note_activity();
    return ProposeRejected{ProposeError::Dropped, leader_};
  }
  Entry entry{term_, log_.last_index() + 1, EntryKind::Normal, std::move(data)};
  const std::uint64_t size = entry_size(entry);
  if (config_.max_uncommitted_bytes != 0 && uncommitted_bytes_ > 0 &&
      uncommitted_bytes_ + size > config_.max_uncommitted_bytes) {
    note_activity();
    return ProposeRejected{ProposeError::Dropped, leader_};
  }
  // The entry's Appends (sent from the next Ready, to every follower: a quiesced group's followers
  // all hold the whole log) wake a sleeping group's followers; a heartbeat round before them would
  // cost each follower two more messages.
  note_activity(false);
  uncommitted_bytes_ += size;
  const Index index = entry.index;
  log_.append(std::move(entry));
  deferred_append_ = std::max(deferred_append_, 1);
  return index;
}

ProposeResult Core::propose_conf_change(ConfChange change) {
  if (role_ != Role::Leader) {
    return ProposeRejected{ProposeError::NotLeader, leader_};
  }
  note_activity();
  // One change at a time, and none before this leader committed an entry of its term: a change
  // appended by an earlier leader may still commit (the single-server-change bug).
  if (transferee_ != 0 || pending_conf_index_ > applied_ || !committed_in_term()) {
    return ProposeRejected{ProposeError::Dropped, leader_};
  }
  const bool voter = conf_.is_voter(change.node);
  const bool learner = conf_.is_learner(change.node);
  bool valid = change.node != 0 && conf_.voters_outgoing.empty();
  switch (change.kind) {
    case ConfChangeKind::AddVoter:
      valid = valid && !voter;
      break;
    case ConfChangeKind::AddLearner:
      valid = valid && !learner && change.node != config_.id;
      break;
    case ConfChangeKind::RemoveNode:
      valid = valid && (voter || learner) && !(voter && conf_.voters.size() == 1);
      break;
  }
  if (!valid) {
    return ProposeRejected{ProposeError::Invalid, leader_};
  }
  const ConfState resulting = apply_conf_change(conf_, change);
  Entry entry{term_, log_.last_index() + 1, EntryKind::ConfChange, encode_conf_change(change, resulting)};
  const Index index = entry.index;
  pending_conf_index_ = index;
  log_.append(std::move(entry));
  deferred_append_ = std::max(deferred_append_, 1);
  return index;
}

void Core::apply_conf_entry(const Entry& entry) {
  if (auto resulting = decode_conf_result(entry.data)) {
    conf_ = std::move(*resulting);
  } else if (auto change = decode_conf_change(entry.data)) {
    conf_ = apply_conf_change(std::move(conf_), *change);
  } else {
    return;
  }
  if (role_ != Role::Leader) {
    return;
  }
  if (!conf_.is_voter(config_.id)) {
    // A leader removed (or demoted) by the change it just committed steps down; the remaining
    // voters elect a new leader.
    become_follower(term_, 0);
    return;
  }
  sync_progress();
  if (transferee_ != 0 && !conf_.is_voter(transferee_)) {
    abort_transfer();
  }
  // A removal may let entries commit under the smaller quorum.
  const Index previous = commit_;
  if (maybe_commit()) {
    on_leader_commit(previous);
  }
}

void Core::sync_progress() {
  const auto track = [&](NodeId id, bool learner) {
    if (id == config_.id) {
      return;
    }
    auto [it, added] = progress_.try_emplace(id, config_.max_inflight);
    if (added) {
      it->second.next = log_.last_index() + 1;
    }
    it->second.learner = learner;
  };
  for (NodeId id : conf_.voters) {
    track(id, false);
  }
  for (NodeId id : conf_.voters_outgoing) {
    track(id, false);
  }
  for (NodeId id : conf_.learners) {
    track(id, true);
  }
  std::erase_if(progress_, [&](const auto& item) { return !conf_.is_member(item.first); });
}

void Core::transfer_leadership(NodeId to) {
  if (role_ != Role::Leader || to == config_.id || !conf_.is_voter(to) || to == transferee_) {
    return;
  }
  note_activity();
  transferee_ = to;
  transfer_elapsed_ = 0;
  timeout_now_sent_ = false;
  Progress* pr = progress(to);
  if (pr == nullptr) {
    abort_transfer();
    return;
  }
  if (pr->match == log_.last_index()) {
    send_timeout_now(to);
  } else {
    send_append(to, *pr, true);
  }
}

void Core::send_timeout_now(NodeId to) {
  // The transferee's election ignores the voters' stickiness, so the lease is no proof anymore.
  lease_revoked_ = true;
  timeout_now_sent_ = true;
  Message m;
  m.type = MessageType::TimeoutNow;
  m.to = to;
  m.term = term_;
  send(std::move(m));
}

void Core::abort_transfer() {
  transferee_ = 0;
  transfer_elapsed_ = 0;
}

}  // namespace elfin::raft::internal
