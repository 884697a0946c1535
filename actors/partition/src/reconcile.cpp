#include "reconcile.hpp"

#include <algorithm>

namespace elfin::actors::partition::internal {

namespace rf = elfin::raft;

ReconcileStep next_step(const rf::ConfState& conf, const std::vector<rf::NodeId>& target, rf::NodeId self,
                        const std::function<std::optional<rf::Index>(rf::NodeId)>& match, rf::Index last_index) {
  using Kind = ReconcileStep::Kind;
  if (target.empty() || !conf.voters_outgoing.empty()) return {};
  const auto in = [](const std::vector<rf::NodeId>& set, rf::NodeId node) {
    return std::find(set.begin(), set.end(), node) != set.end();
  };
  for (rf::NodeId node : target) {
    if (!in(conf.voters, node) && !in(conf.learners, node)) return {Kind::AddLearner, node};
  }
  for (rf::NodeId node : target) {
    if (!in(conf.learners, node)) continue;
    const auto m = match(node);
    if (m && *m + kCaughtUpSlack >= last_index) return {Kind::Promote, node};
    return {};  // catching up
  }
  for (rf::NodeId node : conf.learners) {
    if (!in(target, node)) return {Kind::Remove, node};
  }
  for (rf::NodeId node : conf.voters) {
    if (in(target, node) || node == self) continue;
    return {Kind::Remove, node};
  }
  if (!in(target, self) && in(conf.voters, self)) {
    rf::NodeId best = 0;
    rf::Index best_match = 0;
    for (rf::NodeId node : target) {
      const auto m = match(node);
      if (m && (best == 0 || *m > best_match)) {
        best = node;
        best_match = *m;
      }
    }
    if (best != 0) return {Kind::TransferLeader, best};
  }
  return {};
}

}  // namespace elfin::actors::partition::internal
