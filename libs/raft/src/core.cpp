#include "core.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace elfin::raft::internal {
namespace {

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Core::Core(Config config, Recovered recovered, std::function<std::optional<Snapshot>()> snapshot_source)
    : config_(config),
      snapshot_source_(std::move(snapshot_source)),
      rng_(config.seed ^ (config.id * 0xd1b54a32d192ed03ULL)) {
  if (config_.id == 0) {
    throw std::invalid_argument("raft: Config::id must not be 0");
  }
  if (config_.heartbeat_tick <= 0 || config_.election_tick <= config_.heartbeat_tick) {
    throw std::invalid_argument("raft: need 0 < heartbeat_tick < election_tick");
  }
  if (config_.read_mode == Config::ReadMode::Lease && !config_.check_quorum) {
    throw std::invalid_argument("raft: lease reads need check_quorum");
  }
  if (config_.max_inflight == 0) {
    config_.max_inflight = 1;
  }

  term_ = recovered.hard_state.term;
  vote_ = recovered.hard_state.vote;
  if (recovered.snapshot) {
    log_.restore(recovered.snapshot->index, recovered.snapshot->term);
    conf_ = recovered.snapshot->conf;
  } else {
    conf_ = std::move(recovered.conf);
  }
  for (Entry& entry : recovered.entries) {
    if (entry.index <= log_.snapshot_index()) {
      continue;
    }
    if (entry.index != log_.last_index() + 1) {
      break;  // a gap: what follows cannot be trusted
    }
    log_.append(std::move(entry));
  }
  log_.mark_all_durable();
  commit_ = std::max(std::min(recovered.hard_state.commit, log_.last_index()), log_.snapshot_index());
  applied_ = std::clamp(recovered.applied, log_.snapshot_index(), log_.last_index());
  commit_ = std::max(commit_, applied_);
  // Membership changes committed before the crash are in force again right away (they are
  // handed out again with the entries after `applied`, which re-applies them harmlessly).
  for (Index index = log_.first_index(); index <= commit_; ++index) {
    if (log_.at(index).kind == EntryKind::ConfChange) {
      apply_conf_entry(log_.at(index));
    }
  }
  emitted_hard_state_ = recovered.hard_state;
  durable_hard_state_ = recovered.hard_state;
  emitted_term_ = term_;
  lease_guard_ = config_.read_mode == Config::ReadMode::Lease;
  reset_election_timeout();
}

void Core::reset_election_timeout() {
  election_elapsed_ = 0;
  randomized_election_timeout_ =
      config_.election_tick + static_cast<int>(splitmix(rng_) % static_cast<std::uint64_t>(config_.election_tick));
}

void Core::send(Message&& m) {
  m.from = config_.id;
  switch (m.type) {
    // Acknowledgements and votes depend on this replica's durable state: they leave only once
    // the ready carrying that state is durable.
    case MessageType::Vote:
    case MessageType::VoteResponse:
    case MessageType::AppendResponse:
    case MessageType::HeartbeatResponse:
      messages_after_persist_.push_back(std::move(m));
      break;
    default:
      messages_.push_back(std::move(m));
      break;
  }
}

void Core::tick() {
  if (quiesced_) {
    return;
  }
  ++ticks_;
  if (role_ == Role::Leader) {
    tick_leader();
  } else {
    tick_election();
  }
}

void Core::campaign_now() {
  if (role_ != Role::Leader) {
    campaign(config_.pre_vote, false);
  }
}

void Core::commit_to(Index index) {
  if (index > commit_) {
    commit_ = index;
  }
}

bool Core::committed_in_term() const noexcept {
  auto term = log_.term(commit_);
  return term && *term == term_;
}

void Core::on_truncated(Index index) {
  for (ReadyRecord& record : records_) {
    if (record.last_entry >= index) {
      record.last_entry = index - 1;
    }
  }
}

void Core::compact(Index index) {
  index = std::min(index, applied_);
  if (index <= log_.snapshot_index()) {
    return;
  }
  log_.compact(index);
}

void Core::report_unreachable(NodeId node) {
  if (role_ != Role::Leader) {
    return;
  }
  if (Progress* pr = progress(node); pr && pr->state == ProgressState::Replicate) {
    pr->become_probe();
  }
}

void Core::report_snapshot(NodeId node, bool ok) {
  if (role_ != Role::Leader) {
    return;
  }
  Progress* pr = progress(node);
  if (pr == nullptr || pr->state != ProgressState::Snapshot) {
    return;
  }
  if (!ok) {
    pr->pending_snapshot = 0;
  }
  // Either way wait for the follower's answer (or the next heartbeat response) before probing.
  pr->become_probe();
  pr->probe_sent = true;
}

bool Core::has_ready() const {
  if (deferred_append_ != 0 || !messages_.empty() || !messages_after_persist_.empty() || !reads_.empty() ||
      received_snapshot_ || log_.has_unstable()) {
    return true;
  }
  if (HardState{term_, vote_, commit_} != emitted_hard_state_) {
    return true;
  }
  if (role_ != emitted_role_ || leader_ != emitted_leader_ || term_ != emitted_term_) {
    return true;
  }
  return std::min(commit_, log_.persisted()) > applied_;
}

Ready Core::ready() {
  if (deferred_append_ != 0) {
    if (role_ == Role::Leader) {
      bcast_append(deferred_append_ == 2);
    }
    deferred_append_ = 0;
  }
  Ready ready;
  ready.id = next_ready_id_++;
  ReadyRecord record{ready.id, 0, std::nullopt, 0};

  const HardState hard_state{term_, vote_, commit_};
  if (hard_state != emitted_hard_state_) {
    ready.must_sync = hard_state.term != emitted_hard_state_.term || hard_state.vote != emitted_hard_state_.vote;
    ready.hard_state = hard_state;
    record.hard_state = hard_state;
    emitted_hard_state_ = hard_state;
  }
  if (received_snapshot_) {
    record.snapshot_index = received_snapshot_->meta.index;
    ready.snapshot = std::move(received_snapshot_);
    received_snapshot_.reset();
    ready.must_sync = true;
  }
  ready.entries = log_.take_unstable();
  if (!ready.entries.empty()) {
    record.last_entry = ready.entries.back().index;
    ready.must_sync = true;
  }
  ready.messages = std::move(messages_);
  messages_.clear();
  ready.messages_after_persist = std::move(messages_after_persist_);
  messages_after_persist_.clear();

  // Only entries durable here: an acknowledged write must survive a crash of this replica too.
  const Index last_committed = std::min(commit_, log_.persisted());
  if (last_committed > applied_) {
    ready.committed.reserve(last_committed - applied_);
    for (Index index = applied_ + 1; index <= last_committed; ++index) {
      ready.committed.push_back(log_.at(index));
    }
    applied_ = last_committed;
    for (const Entry& entry : ready.committed) {
      if (entry.kind == EntryKind::ConfChange) {
        apply_conf_entry(entry);
      }
    }
  }
  ready.reads = std::move(reads_);
  reads_.clear();
  if (progress_.empty()) {
    maybe_quiesce();  // a lone voter sleeps as soon as what it wrote is applied
  }

  ready.role = role_;
  ready.leader = leader_;
  ready.term = term_;
  emitted_role_ = role_;
  emitted_leader_ = leader_;
  emitted_term_ = term_;
  records_.push_back(record);
  return ready;
}

void Core::advance(std::uint64_t ready_id) {
  while (!records_.empty() && records_.front().id <= ready_id) {
    ReadyRecord& record = records_.front();
    if (record.hard_state) {
      durable_hard_state_ = *record.hard_state;
    }
    if (record.snapshot_index != 0) {
      log_.persisted_up_to(record.snapshot_index);
    }
    if (record.last_entry != 0) {
      log_.persisted_up_to(record.last_entry);
    }
    records_.pop_front();
  }
  if (role_ == Role::Leader) {
    // The leader's own copy counts only now that it is durable.
    const Index previous = commit_;
    if (maybe_commit()) {
      on_leader_commit(previous);
    }
  } else if (role_ == Role::Candidate) {
    count_self_vote();
  }
}

}  // namespace elfin::raft::internal
