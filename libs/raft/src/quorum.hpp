// Quorum arithmetic over a configuration: the largest index a quorum of voters has reached (the
// commit rule, also used for lease stamps) and the outcome of an election. A joint configuration
// (voters_outgoing non-empty) needs a majority of both voter sets.
//
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>

namespace elfin::raft::internal {

enum class VoteResult : std::uint8_t { Pending, Won, Lost };

/// The largest value v such that a majority of `voters` have value(id) >= v; 0 without voters.
template <class ValueOf>
[[nodiscard]] std::uint64_t majority_value(const std::vector<NodeId>& voters, ValueOf&& value_of) {
  if (voters.empty()) {
    return 0;
  }
  // Configurations are small (3-7 voters): a stack buffer avoids an allocation per commit check.
  std::uint64_t stack[16];
  std::vector<std::uint64_t> heap;
  std::uint64_t* values = stack;
  if (voters.size() > 16) {
    heap.resize(voters.size());
    values = heap.data();
  }
  for (std::size_t k = 0; k < voters.size(); ++k) {
    values[k] = value_of(voters[k]);
  }
  std::sort(values, values + voters.size(), [](std::uint64_t a, std::uint64_t b) { return a > b; });
  return values[voters.size() / 2];
}

template <class ValueOf>
[[nodiscard]] std::uint64_t quorum_value(const ConfState& conf, ValueOf&& value_of) {
  std::uint64_t value = majority_value(conf.voters, value_of);
  if (!conf.voters_outgoing.empty()) {
    value = std::min(value, majority_value(conf.voters_outgoing, value_of));
  }
  return value;
}

/// `vote_of(id)`: true granted, false denied, nullopt not answered yet.
template <class VoteOf>
[[nodiscard]] VoteResult majority_vote(const std::vector<NodeId>& voters, VoteOf&& vote_of) {
  if (voters.empty()) {
    return VoteResult::Won;  // an empty half of a joint config agrees to anything
  }
  std::size_t granted = 0;
  std::size_t missing = 0;
  for (NodeId id : voters) {
    std::optional<bool> vote = vote_of(id);
    if (!vote) {
      ++missing;
    } else if (*vote) {
      ++granted;
    }
  }
  const std::size_t quorum = voters.size() / 2 + 1;
  if (granted >= quorum) {
    return VoteResult::Won;
  }
  return granted + missing >= quorum ? VoteResult::Pending : VoteResult::Lost;
}

template <class VoteOf>
[[nodiscard]] VoteResult quorum_vote(const ConfState& conf, VoteOf&& vote_of) {
  if (conf.voters.empty()) {
    return VoteResult::Lost;
  }
  const VoteResult in = majority_vote(conf.voters, vote_of);
  const VoteResult out = majority_vote(conf.voters_outgoing, vote_of);
  if (in == VoteResult::Won && out == VoteResult::Won) {
    return VoteResult::Won;
  }
  if (in == VoteResult::Lost || out == VoteResult::Lost) {
    return VoteResult::Lost;
  }
  return VoteResult::Pending;
}

}  // namespace elfin::raft::internal
