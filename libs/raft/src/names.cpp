// Names of the enumerations (logs, test output) and the transfer marker.
#include <array>

#include <elfin/raft/message.hpp>
#include <elfin/raft/propose_result.hpp>
#include <elfin/raft/role.hpp>

namespace elfin::raft {

std::string_view to_string(MessageType type) noexcept {
  switch (type) {
    case MessageType::PreVote:
      return "PreVote";
    case MessageType::PreVoteResponse:
      return "PreVoteResponse";
    case MessageType::Vote:
      return "Vote";
    case MessageType::VoteResponse:
      return "VoteResponse";
    case MessageType::Append:
      return "Append";
    case MessageType::AppendResponse:
      return "AppendResponse";
    case MessageType::Heartbeat:
      return "Heartbeat";
    case MessageType::HeartbeatResponse:
      return "HeartbeatResponse";
    case MessageType::InstallSnapshot:
      return "InstallSnapshot";
    case MessageType::TimeoutNow:
      return "TimeoutNow";
    case MessageType::ReadIndex:
      return "ReadIndex";
    case MessageType::ReadIndexResponse:
      return "ReadIndexResponse";
  }
  return "?";
}

std::string_view to_string(Role role) noexcept {
  switch (role) {
    case Role::Follower:
      return "Follower";
    case Role::PreCandidate:
      return "PreCandidate";
    case Role::Candidate:
      return "Candidate";
    case Role::Leader:
      return "Leader";
  }
  return "?";
}

std::string_view to_string(ProposeError error) noexcept {
  switch (error) {
    case ProposeError::NotLeader:
      return "NotLeader";
    case ProposeError::Dropped:
      return "Dropped";
    case ProposeError::Invalid:
      return "Invalid";
  }
  return "?";
}

std::span<const std::uint8_t> transfer_context() noexcept {
  static constexpr std::array<std::uint8_t, 8> kMarker{'t', 'r', 'a', 'n', 's', 'f', 'e', 'r'};
  return kMarker;
}

}  // namespace elfin::raft
