// Log replication: the follower's side of Append, Heartbeat and InstallSnapshot; the leader's
// flow control per follower (probe / replicate / snapshot, the in-flight window), fast
// backtracking on rejections, and the commit rule.
#include <algorithm>
#include <utility>

#include "core.hpp"
#include "quorum.hpp"

namespace elfin::raft::internal {

Progress* Core::progress(NodeId id) {
  auto it = progress_.find(id);
  return it == progress_.end() ? nullptr : &it->second;
}

// --- follower side -------------------------------------------------------------------------

void Core::handle_append(Message&& m) {
  Message response;
  response.type = MessageType::AppendResponse;
  response.to = m.from;
  response.term = term_;
  if (m.index < commit_) {
    // Everything up to the commit index matches any leader's log.
    response.index = commit_;
    send(std::move(response));
    return;
  }
  if (log_.matches(m.index, m.log_term)) {
    const Index last_new = m.index + m.entries.size();
    if (const Index truncated = log_.append_after(m.index, std::move(m.entries)); truncated != 0) {
      on_truncated(truncated);
    }
    // The leader's commit covers only what it knows matches; past `last_new` this log may still
    // hold entries of another leader.
    commit_to(std::min(m.commit, last_new));
    response.index = last_new;
    send(std::move(response));
    return;
  }
  // Reject with a hint: the last index at which this log could agree, skipping every entry
  // whose term is above the leader's term at the probed index (one round trip per term).
  const Index hint = log_.find_conflict_by_term(std::min(m.index, log_.last_index()), m.log_term);
  response.reject = true;
  response.index = m.index;
  response.reject_hint = hint;
  response.log_term = log_.term(hint).value_or(0);
  send(std::move(response));
}

void Core::handle_heartbeat(const Message& m) {
  // The leader sent at most what it knows this replica matches.
  commit_to(std::min(m.commit, log_.last_index()));
  Message response;
  response.type = MessageType::HeartbeatResponse;
  response.to = m.from;
  response.term = term_;
  response.index = m.index;
  response.context = m.context;
  response.periodic = m.periodic;
  if (m.quiesce) {
    response.quiesce = accept_quiesce(m);
    response.commit = commit_;
  }
  send(std::move(response));
}

void Core::handle_snapshot(Message&& m) {
  Message response;
  response.type = MessageType::AppendResponse;
  response.to = m.from;
  response.term = term_;
  if (!m.snapshot || m.snapshot->meta.index <= commit_) {
    response.index = commit_;  // older than what this replica has: nothing to do
    send(std::move(response));
    return;
  }
  const SnapshotMeta& meta = m.snapshot->meta;
  if (log_.matches(meta.index, meta.term)) {
    // The log already holds it: just learn that it is committed.
    commit_to(meta.index);
    response.index = meta.index;
    send(std::move(response));
    return;
  }
  log_.restore(meta.index, meta.term);
  for (ReadyRecord& record : records_) {
    record.last_entry = std::min(record.last_entry, meta.index);
  }
  conf_ = meta.conf;
  commit_ = meta.index;
  applied_ = meta.index;
  response.index = meta.index;
  received_snapshot_ = std::move(m.snapshot);
  send(std::move(response));
}

// --- leader side ---------------------------------------------------------------------------

bool Core::send_snapshot(NodeId to, Progress& pr) {
  std::optional<Snapshot> snapshot = snapshot_source_ ? snapshot_source_() : std::nullopt;
  if (!snapshot || snapshot->meta.index < log_.snapshot_index()) {
    return false;  // not available yet: retried on the next heartbeat response
  }
  pr.become_snapshot(snapshot->meta.index);
  Message m;
  m.type = MessageType::InstallSnapshot;
  m.to = to;
  m.term = term_;
  m.snapshot = std::move(snapshot);
  send(std::move(m));
  return true;
}

bool Core::send_append(NodeId to, Progress& pr, bool allow_empty) {
  if (pr.paused()) {
    return false;
  }
  const Index prev = pr.next - 1;
  const std::optional<Term> prev_term = log_.term(prev);
  if (!prev_term) {
    return send_snapshot(to, pr);
  }
  std::vector<Entry> entries;
  if (pr.next <= log_.last_index()) {
    entries = log_.slice(pr.next, config_.max_bytes_per_append);
  }
  if (entries.empty() && !allow_empty && pr.state != ProgressState::Probe) {
    return false;
  }
  Message m;
  m.type = MessageType::Append;
  m.to = to;
  m.term = term_;
  m.index = prev;
  m.log_term = *prev_term;
  m.commit = commit_;
  if (pr.state == ProgressState::Replicate) {
    if (!entries.empty()) {
      std::uint64_t bytes = 0;
      for (const Entry& e : entries) {
        bytes += entry_size(e);
      }
      pr.next = entries.back().index + 1;
      pr.inflights.add(entries.back().index, bytes);
    }
  } else {
    pr.probe_sent = true;
  }
  m.entries = std::move(entries);
  send(std::move(m));
  return true;
}

void Core::fill_window(NodeId to, Progress& pr) {
  if (pr.state != ProgressState::Replicate) {
    send_append(to, pr, false);
    return;
  }
  while (pr.next <= log_.last_index() && send_append(to, pr, false)) {
  }
}

void Core::bcast_append(bool allow_empty) {
  for (auto& [id, pr] : progress_) {
    if (allow_empty) {
      send_append(id, pr, true);
    }
    fill_window(id, pr);
  }
}

void Core::bcast_heartbeat(const Bytes& context, bool quiesce, bool periodic) {
  for (auto& [id, pr] : progress_) {
    Message m;
    m.type = MessageType::Heartbeat;
    m.to = id;
    m.term = term_;
    // Never more than the follower is known to hold: its log may differ beyond `match`.
    m.commit = std::min(pr.match, commit_);
    m.index = ticks_;  // echoed: the lease counts from when a quorum-acknowledged round was sent
    m.context = context;
    m.quiesce = quiesce;
    m.periodic = periodic;
    send(std::move(m));
  }
}

void Core::handle_append_response(const Message& m) {
  Progress* pr = progress(m.from);
  if (pr == nullptr) {
    return;
  }
  if (m.reject) {
    Index hint = m.reject_hint;
    if (m.log_term > 0) {
      // Skip our entries whose term is above the follower's term at its hint.
      hint = log_.find_conflict_by_term(hint, m.log_term);
    }
    if (pr->maybe_decrease(m.index, hint + 1)) {
      if (pr->state == ProgressState::Replicate) {
        pr->become_probe();
        pr->next = std::max(std::min(m.index, hint + 1), pr->match + 1);
      }
      send_append(m.from, *pr, true);
    }
    return;
  }
  const bool was_paused = pr->paused();
  if (!pr->maybe_update(m.index)) {
    return;
  }
  switch (pr->state) {
    case ProgressState::Probe:
      pr->become_replicate();
      break;
    case ProgressState::Snapshot:
      if (pr->match >= pr->pending_snapshot) {
        pr->become_replicate();
      }
      break;
    case ProgressState::Replicate:
      pr->inflights.free_le(m.index);
      break;
  }
  const Index previous = commit_;
  if (maybe_commit()) {
    on_leader_commit(previous);
  } else if (was_paused) {
    send_append(m.from, *pr, false);
  }
  fill_window(m.from, *pr);
  if (m.from == transferee_ && !timeout_now_sent_ && pr->match == log_.last_index()) {
    send_timeout_now(m.from);
  }
}

void Core::handle_heartbeat_response(const Message& m) {
  Progress* pr = progress(m.from);
  if (pr == nullptr) {
    return;
  }
  pr->lease_stamp = std::max(pr->lease_stamp, m.index);
  if (pr->state == ProgressState::Probe) {
    pr->probe_sent = false;
  } else if (pr->state == ProgressState::Replicate && pr->inflights.full()) {
    pr->inflights.free_first_one();
  }
  if (pr->state == ProgressState::Snapshot) {
    // nothing: wait for the snapshot's acknowledgement, its report or its timeout
  } else if (pr->match < log_.last_index()) {
    // No progress since the previous heartbeat: the window may be full of lost messages, so
    // send (even an empty Append) to learn where the follower stands.
    const bool stalled = pr->match == pr->match_at_heartbeat;
    if (pr->state == ProgressState::Probe || stalled) {
      send_append(m.from, *pr, true);
    }
  }
  pr->match_at_heartbeat = pr->match;
  if (!m.context.empty()) {
    for (ReadRequest& read : read_only_.ack(m.context, m.from, config_.id, conf_)) {
      answer_read(read.index, std::move(read.context), read.from);
    }
  }
  if (m.quiesce && m.index > activity_stamp_ && m.commit == log_.last_index()) {
    pr->quiesced = true;
    maybe_quiesce();
  }
}

bool Core::maybe_commit() {
  const Index quorum = quorum_value(conf_, [&](NodeId voter) -> std::uint64_t {
    if (voter == config_.id) {
      return log_.persisted();  // durable before counted
    }
    const Progress* pr = progress(voter);
    return pr == nullptr ? 0 : pr->match;
  });
  // Figure 8: only an entry of the current term commits by counting replicas.
  if (quorum > commit_ && log_.term(quorum) == term_) {
    commit_ = quorum;
    return true;
  }
  return false;
}

void Core::on_leader_commit(Index previous) {
  for (Index index = previous + 1; index <= commit_; ++index) {
    const Entry& e = log_.at(index);
    if (e.term == term_) {
      uncommitted_bytes_ -= std::min(uncommitted_bytes_, entry_size(e));
    }
  }
  release_waiting_reads();
  deferred_append_ = 2;  // followers learn the new commit index
}

}  // namespace elfin::raft::internal
