// The membership of a Raft group: voters (elect and count toward commit) and learners (receive the
// log, never vote in elections they start nor count). `voters_outgoing` is non-empty only in a
// joint configuration; the library computes quorums for one (a majority of both sets) but never
// creates one itself: membership changes are one server at a time (conf_change.hpp).
//
// Thread safety: a plain value type.
#pragma once

#include <algorithm>
#include <vector>

#include <elfin/raft/entry.hpp>

namespace elfin::raft {

struct ConfState {
  std::vector<NodeId> voters;
  std::vector<NodeId> learners;
  std::vector<NodeId> voters_outgoing;  ///< non-empty only in a joint config

  [[nodiscard]] bool is_voter(NodeId id) const noexcept {
    return std::find(voters.begin(), voters.end(), id) != voters.end() ||
           std::find(voters_outgoing.begin(), voters_outgoing.end(), id) != voters_outgoing.end();
  }
  [[nodiscard]] bool is_learner(NodeId id) const noexcept {
    return std::find(learners.begin(), learners.end(), id) != learners.end();
  }
  [[nodiscard]] bool is_member(NodeId id) const noexcept { return is_voter(id) || is_learner(id); }

  friend bool operator==(const ConfState&, const ConfState&) = default;
};

}  // namespace elfin::raft
