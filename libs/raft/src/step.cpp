// Message dispatch: the term rules every message goes through (adopt a higher term, answer or
// drop a lower one, leader stickiness for votes), then the handler of the replica's role.
#include <algorithm>
#include <utility>

#include "core.hpp"

namespace elfin::raft::internal {
namespace {

bool is_transfer_vote(const Message& m) {
  auto marker = transfer_context();
  return m.type == MessageType::Vote && std::equal(m.context.begin(), m.context.end(), marker.begin(), marker.end());
}

bool from_leader(MessageType type) {
  return type == MessageType::Append || type == MessageType::Heartbeat || type == MessageType::InstallSnapshot;
}

}  // namespace

void Core::step(Message&& m) {
  if (m.from == config_.id || m.from == 0 || (m.to != 0 && m.to != config_.id)) {
    return;  // misrouted
  }
  if (!down_.empty()) {
    report_node_up(m.from);  // it is evidently not down
  }
  if (quiesced_ && !is_quiesce_handshake(m)) {
    wake_up();  // anything but the handshake itself means the group is not idle
  }
  // Reads are not part of the term protocol: a stale answer is caught by the heartbeat round.
  if (m.type == MessageType::ReadIndex) {
    handle_read_index(m);
    return;
  }
  if (m.type == MessageType::ReadIndexResponse) {
    handle_read_index_response(m);
    return;
  }

  if (m.term > term_) {
    if (m.type == MessageType::Vote || m.type == MessageType::PreVote) {
      // Leader stickiness: a replica that heard from a live leader ignores (pre-)votes, unless a
      // leadership transfer asked for the election.
      if (!is_transfer_vote(m) && in_lease()) {
        return;
      }
    }
    // Pre-votes never change the term, and a granted pre-vote carries the term the pre-candidate
    // would campaign at.
    const bool pre_vote_term = m.type == MessageType::PreVote || (m.type == MessageType::PreVoteResponse && !m.reject);
    if (!pre_vote_term) become_follower(m.term, from_leader(m.type) ? m.from : 0);
  } else if (m.term < term_) {
    if ((config_.check_quorum || config_.pre_vote) &&
        (m.type == MessageType::Append || m.type == MessageType::Heartbeat)) {
      // A leader of an older term (or one cut off for long): tell it the newer term so it steps
      // down, instead of leaving it to retry forever.
      Message response;
      response.type = MessageType::AppendResponse;
      response.to = m.from;
      response.term = term_;
      send(std::move(response));
    } else if (m.type == MessageType::PreVote) {
      Message response;
      response.type = MessageType::PreVoteResponse;
      response.to = m.from;
      response.term = term_;
      response.reject = true;
      send(std::move(response));
    }
    return;
  }

  switch (m.type) {
    case MessageType::PreVote:
    case MessageType::Vote:
      handle_vote_request(m);
      return;
    default:
      break;
  }
  switch (role_) {
    case Role::Leader:
      step_leader(std::move(m));
      break;
    case Role::PreCandidate:
    case Role::Candidate:
      if (from_leader(m.type)) {
        // A leader exists in this term.
        become_follower(term_, m.from);
        step_follower(std::move(m));
      } else if (m.type == MessageType::PreVoteResponse || m.type == MessageType::VoteResponse) {
        handle_vote_response(m);
      }
      break;
    case Role::Follower:
      step_follower(std::move(m));
      break;
  }
}

void Core::step_follower(Message&& m) {
  switch (m.type) {
    case MessageType::Append:
      election_elapsed_ = 0;
      leader_ = m.from;
      handle_append(std::move(m));
      break;
    case MessageType::Heartbeat:
      election_elapsed_ = 0;
      leader_ = m.from;
      handle_heartbeat(m);
      break;
    case MessageType::InstallSnapshot:
      election_elapsed_ = 0;
      leader_ = m.from;
      handle_snapshot(std::move(m));
      break;
    case MessageType::TimeoutNow:
      // The leader hands over: campaign now, without pre-vote, past the voters' stickiness.
      campaign(false, true);
      break;
    default:
      break;
  }
}

void Core::step_leader(Message&& m) {
  if (Progress* pr = progress(m.from)) {
    pr->recent_active = true;
  }
  switch (m.type) {
    case MessageType::AppendResponse:
      handle_append_response(m);
      break;
    case MessageType::HeartbeatResponse:
      handle_heartbeat_response(m);
      break;
    default:
      break;
  }
}

}  // namespace elfin::raft::internal
