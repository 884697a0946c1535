#include <elfin/assignment/rebalance_plan.hpp>

namespace elfin::assignment {

std::map<PodId, std::vector<ShardId>> RebalancePlan::assignments() const {
  std::map<PodId, std::vector<ShardId>> by_pod;
  for (const Move& move : moves) by_pod[move.to].push_back(move.shard);
  return by_pod;
}

std::map<PodId, std::vector<ShardId>> RebalancePlan::unassignments() const {
  std::map<PodId, std::vector<ShardId>> by_pod;
  for (const Move& move : moves) {
    if (move.from) by_pod[*move.from].push_back(move.shard);
  }
  return by_pod;
}

}  // namespace elfin::assignment
