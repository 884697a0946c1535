// A Raft message between two replicas of one group: a plain value the application carries over
// its transport (protocols/raft maps it to msgpack). The library creates them in Ready::messages /
// Ready::messages_after_persist and consumes them in Node::step.
//
// What each field means per type:
//   PreVote, Vote            term: the (pre-)candidate's term (for PreVote, the term it would
//                            campaign at); log_term/index: its last entry. A Vote whose context
//                            equals transfer_context() comes from a leadership transfer and
//                            bypasses the voters' leader-stickiness.
//   *VoteResponse            reject: vote denied.
//   Append                   log_term/index: the entry before `entries`; commit: leader's commit.
//   AppendResponse           index: the follower's last entry known to match (accepted), or the
//                            rejected Append's index (reject); reject_hint/log_term: where the
//                            follower suggests retrying and its term there (fast backtracking).
//   Heartbeat                commit: min(leader commit, follower match); context: a read round;
//                            index: the leader's tick stamp (echoed, for lease reads);
//                            quiesce: the leader asks the follower to quiesce (commit is then the
//                            leader's last index, which the follower is known to hold).
//   HeartbeatResponse        context and index echoed; quiesce: the follower quiesced, its log
//                            ending at commit.
//   periodic                 (Heartbeat, HeartbeatResponse) a leader's timed heartbeat or the answer
//                            to one, not a read round's or a wake-up's: nothing waits for it but
//                            the election and quorum timers, so a transport may delay it a little
//                            to carry the heartbeats of many groups between two nodes together.
//   InstallSnapshot          snapshot.
//   TimeoutNow               the receiver campaigns at once (leadership transfer).
//   ReadIndex                a follower forwards a read; context: the app's context.
//   ReadIndexResponse        index: the read index; context echoed; reject: no leader to serve it.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <elfin/raft/entry.hpp>
#include <elfin/raft/snapshot.hpp>

namespace elfin::raft {

enum class MessageType : std::uint8_t {
  PreVote,
  PreVoteResponse,
  Vote,
  VoteResponse,
  Append,
  AppendResponse,
  Heartbeat,
  HeartbeatResponse,
  InstallSnapshot,
  TimeoutNow,
  ReadIndex,
  ReadIndexResponse,
};

[[nodiscard]] std::string_view to_string(MessageType type) noexcept;

struct Message {
  MessageType type = MessageType::Heartbeat;
  NodeId from = 0;
  NodeId to = 0;
  Term term = 0;
  Term log_term = 0;
  Index index = 0;
  std::vector<Entry> entries;
  Index commit = 0;
  bool reject = false;
  Index reject_hint = 0;
  std::optional<Snapshot> snapshot;
  Bytes context;
  bool quiesce = false;
  bool periodic = false;
};

/// The context a Vote carries when a leadership transfer asked for the election.
[[nodiscard]] std::span<const std::uint8_t> transfer_context() noexcept;

}  // namespace elfin::raft
