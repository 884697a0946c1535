// Linearizable reads: ReadIndex (a heartbeat round confirms leadership after the read arrived;
// the read may be served once the state machine reaches the commit index of its arrival) and
// lease reads (config.hpp states the clock bound). Followers forward reads to the leader.
#include <utility>

#include "core.hpp"
#include "quorum.hpp"

namespace elfin::raft::internal {

void Core::read_index(Bytes context) {
  if (role_ == Role::Leader) {
    note_activity();
    leader_read(std::move(context), config_.id);
  } else if (role_ == Role::Follower && leader_ != 0) {
    Message m;
    m.type = MessageType::ReadIndex;
    m.to = leader_;
    m.term = term_;
    m.context = std::move(context);
    send(std::move(m));
  } else {
    reads_.push_back(ReadState{0, std::move(context), true});
  }
}

void Core::leader_read(Bytes context, NodeId from) {
  if (!committed_in_term()) {
    // Until its no-op commits, this leader's commit index may be behind an earlier leader's.
    read_only_.wait_for_commit(std::move(context), from);
    return;
  }
  if (config_.read_mode == Config::ReadMode::Lease && lease_valid()) {
    answer_read(commit_, std::move(context), from);
    return;
  }
  Bytes round = read_only_.add(commit_, std::move(context), from);
  std::vector<ReadRequest> released = read_only_.ack(round, config_.id, config_.id, conf_);
  if (!released.empty()) {  // a single voter
    for (ReadRequest& read : released) {
      answer_read(read.index, std::move(read.context), read.from);
    }
    return;
  }
  bcast_heartbeat(round);
}

void Core::answer_read(Index index, Bytes context, NodeId from) {
  if (from == config_.id) {
    reads_.push_back(ReadState{index, std::move(context), false});
    return;
  }
  Message m;
  m.type = MessageType::ReadIndexResponse;
  m.to = from;
  m.term = term_;
  m.index = index;
  m.context = std::move(context);
  send(std::move(m));
}

void Core::reject_reads() {
  for (ReadRequest& read : read_only_.take_all()) {
    if (read.from == config_.id) {
      reads_.push_back(ReadState{0, std::move(read.context), true});
    } else {
      Message m;
      m.type = MessageType::ReadIndexResponse;
      m.to = read.from;
      m.term = term_;
      m.reject = true;
      m.context = std::move(read.context);
      send(std::move(m));
    }
  }
}

void Core::release_waiting_reads() {
  if (!committed_in_term()) {
    return;
  }
  for (ReadRequest& read : read_only_.take_waiting()) {
    leader_read(std::move(read.context), read.from);
  }
}

bool Core::lease_valid() const {
  if (lease_revoked_ || transferee_ != 0) {
    return false;
  }
  const std::uint64_t start = quorum_value(conf_, [&](NodeId voter) -> std::uint64_t {
    if (voter == config_.id) {
      return ticks_;
    }
    auto it = progress_.find(voter);
    return it == progress_.end() ? 0 : it->second.lease_stamp;
  });
  if (start == 0) {
    return false;
  }
  // See config.hpp: a voter that received the round sent at `start` refuses other candidates for
  // election_tick of its ticks; allow for tick granularity (2) and drift.
  const auto window = static_cast<std::int64_t>(config_.election_tick) - 2 - config_.lease_drift_ticks;
  return static_cast<std::int64_t>(ticks_ - start) <= window;
}

void Core::handle_read_index(const Message& m) {
  if (role_ == Role::Leader) {
    note_activity();
    leader_read(m.context, m.from);
    return;
  }
  Message response;
  response.type = MessageType::ReadIndexResponse;
  response.to = m.from;
  response.term = term_;
  response.reject = true;
  response.context = m.context;
  send(std::move(response));
}

void Core::handle_read_index_response(const Message& m) {
  reads_.push_back(ReadState{m.reject ? 0 : m.index, m.context, m.reject});
}

}  // namespace elfin::raft::internal
