// Roles and elections: election timeouts, pre-vote, votes (counted only once durable),
// check-quorum and leader stickiness.
#include <algorithm>
#include <cstring>

#include "core.hpp"
#include "quorum.hpp"

namespace elfin::raft::internal {

bool Core::in_lease() const noexcept {
  // Heard from a live leader within the election timeout (or just restarted in Lease mode, when
  // this replica may have acknowledged a lease it no longer remembers).
  return lease_guard_ || (config_.check_quorum && leader_ != 0 && election_elapsed_ < config_.election_tick);
}

void Core::tick_election() {
  ++election_elapsed_;
  if (lease_guard_ && election_elapsed_ >= config_.election_tick) {
    lease_guard_ = false;
  }
  if (promotable() && election_elapsed_ >= randomized_election_timeout_) {
    election_elapsed_ = 0;
    campaign(config_.pre_vote, false);
  }
}

void Core::tick_leader() {
  idle_ticks_ = std::min(idle_ticks_ + 1, config_.quiesce_after_ticks + 1);
  ++heartbeat_elapsed_;
  ++election_elapsed_;
  if (election_elapsed_ >= config_.election_tick) {
    election_elapsed_ = 0;
    if (config_.check_quorum && !quorum_active()) {
      become_follower(term_, 0);
      return;
    }
  }
  if (transferee_ != 0 && ++transfer_elapsed_ >= config_.election_tick) {
    abort_transfer();
  }
  for (auto& [id, pr] : progress_) {
    // A snapshot that was neither acknowledged nor reported is retried by probing.
    if (pr.state == ProgressState::Snapshot && ++pr.snapshot_elapsed >= 2 * config_.election_tick) {
      pr.become_probe();
    }
  }
  if (heartbeat_elapsed_ >= config_.heartbeat_tick) {
    heartbeat_elapsed_ = 0;
    // Idle and caught up everywhere: the heartbeat asks the followers to quiesce.
    bcast_heartbeat(read_only_.last_context(), can_quiesce(), true);
    maybe_quiesce();  // a lone voter quiesces at once
  }
}

bool Core::quorum_active() {
  const auto active = [&](NodeId voter) -> std::uint64_t {
    if (voter == config_.id) {
      return 1;
    }
    const Progress* pr = progress(voter);
    return pr != nullptr && pr->recent_active ? 1 : 0;
  };
  const bool ok = quorum_value(conf_, active) == 1;
  for (auto& [id, pr] : progress_) {
    pr.recent_active = false;
  }
  return ok;
}

void Core::become_follower(Term term, NodeId leader) {
  if (role_ == Role::Leader) {
    reject_reads();
    progress_.clear();
  }
  if (term != term_) {
    term_ = term;
    vote_ = 0;
  }
  role_ = Role::Follower;
  quiesced_ = false;
  leader_ = leader;
  transferee_ = 0;
  votes_.clear();
  reset_election_timeout();
}

void Core::become_pre_candidate() {
  quiesced_ = false;
  role_ = Role::PreCandidate;
  leader_ = 0;
  votes_.clear();
  votes_[config_.id] = true;
  reset_election_timeout();
}

void Core::become_candidate() {
  quiesced_ = false;
  ++term_;
  vote_ = config_.id;
  role_ = Role::Candidate;
  leader_ = 0;
  votes_.clear();
  reset_election_timeout();
}

void Core::become_leader() {
  quiesced_ = false;
  role_ = Role::Leader;
  leader_ = config_.id;
  transferee_ = 0;
  transfer_elapsed_ = 0;
  lease_revoked_ = false;
  votes_.clear();
  heartbeat_elapsed_ = 0;
  election_elapsed_ = 0;
  idle_ticks_ = 0;
  activity_stamp_ = ticks_;
  uncommitted_bytes_ = 0;
  progress_.clear();
  sync_progress();
  // No membership change before everything of earlier terms is applied.
  pending_conf_index_ = log_.last_index();
  // The no-op: entries of earlier terms commit only through an entry of this term (Figure 8),
  // and reads wait for it.
  log_.append(Entry{term_, log_.last_index() + 1, EntryKind::Normal, {}});
  bcast_append(true);
}

void Core::campaign(bool pre_vote, bool transfer) {
  if (!promotable() || has_unapplied_conf_change()) {
    return;
  }
  if (pre_vote) {
    become_pre_candidate();
  } else {
    become_candidate();
  }
  const Term term = pre_vote ? term_ + 1 : term_;
  for (NodeId voter : conf_.voters) {
    if (voter == config_.id) {
      continue;
    }
    Message m;
    m.type = pre_vote ? MessageType::PreVote : MessageType::Vote;
    m.to = voter;
    m.term = term;
    m.index = log_.last_index();
    m.log_term = log_.last_term();
    if (transfer) {
      auto marker = transfer_context();
      m.context.assign(marker.begin(), marker.end());
    }
    send(std::move(m));
  }
  if (pre_vote) {
    // A single voter wins its pre-vote alone.
    if (quorum_vote(conf_, [&](NodeId v) -> std::optional<bool> {
          auto it = votes_.find(v);
          return it == votes_.end() ? std::nullopt : std::optional<bool>(it->second);
        }) == VoteResult::Won) {
      campaign(false, transfer);
    }
  }
  // A candidate's own vote counts once it is durable (count_self_vote, from advance()).
}

void Core::count_self_vote() {
  if (role_ != Role::Candidate || durable_hard_state_.term != term_ || durable_hard_state_.vote != config_.id ||
      votes_.contains(config_.id)) {
    return;
  }
  Message self;
  self.type = MessageType::VoteResponse;
  self.from = config_.id;
  self.term = term_;
  handle_vote_response(self);
}

void Core::handle_vote_request(const Message& m) {
  const bool pre = m.type == MessageType::PreVote;
  const bool can_vote = vote_ == m.from || (vote_ == 0 && leader_ == 0) || (pre && m.term > term_);
  Message response;
  response.type = pre ? MessageType::PreVoteResponse : MessageType::VoteResponse;
  response.to = m.from;
  if (can_vote && log_.is_up_to_date(m.index, m.log_term)) {
    // A granted pre-vote answers at the requested term, so the pre-candidate counts it.
    response.term = m.term;
    if (!pre) {
      election_elapsed_ = 0;
      vote_ = m.from;
    }
  } else {
    response.term = term_;
    response.reject = true;
  }
  send(std::move(response));
}

void Core::handle_vote_response(const Message& m) {
  const bool pre = m.type == MessageType::PreVoteResponse;
  if ((pre && role_ != Role::PreCandidate) || (!pre && role_ != Role::Candidate)) {
    return;
  }
  votes_.try_emplace(m.from, !m.reject);
  const VoteResult result = quorum_vote(conf_, [&](NodeId v) -> std::optional<bool> {
    auto it = votes_.find(v);
    return it == votes_.end() ? std::nullopt : std::optional<bool>(it->second);
  });
  if (result == VoteResult::Won) {
    if (pre) {
      campaign(false, false);
    } else {
      become_leader();
    }
  } else if (result == VoteResult::Lost) {
    become_follower(term_, 0);
  }
}

bool Core::has_unapplied_conf_change() const {
  for (Index index = std::max(applied_ + 1, log_.first_index()); index <= std::min(commit_, log_.last_index());
       ++index) {
    if (log_.at(index).kind == EntryKind::ConfChange) {
      return true;
    }
  }
  return false;
}

}  // namespace elfin::raft::internal
