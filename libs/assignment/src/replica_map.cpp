#include <elfin/assignment/replica_map.hpp>

#include <algorithm>

namespace elfin::assignment {

ReplicaMap ReplicaMap::unassigned(ShardId first, std::uint32_t count, std::uint64_t epoch) {
  ReplicaMap map;
  map.epoch_ = epoch;
  for (std::uint32_t i = 0; i < count; ++i)
    map.replicas_.emplace_hint(map.replicas_.end(), first + i, std::vector<PodId>{});
  return map;
}

ReplicaMap ReplicaMap::from_replicas(std::map<ShardId, std::vector<PodId>> replicas, std::uint64_t epoch) {
  ReplicaMap map;
  map.epoch_ = epoch;
  map.replicas_ = std::move(replicas);
  return map;
}

ReplicaMap ReplicaMap::from_assignment(const AssignmentMap& assignment) {
  ReplicaMap map;
  map.epoch_ = assignment.epoch();
  for (const auto& [shard, owner] : assignment.owners()) {
    auto& set = map.replicas_.emplace_hint(map.replicas_.end(), shard, std::vector<PodId>{})->second;
    if (owner) set.push_back(*owner);
  }
  return map;
}

std::vector<PodId> ReplicaMap::replicas(ShardId shard) const {
  const auto it = replicas_.find(shard);
  if (it == replicas_.end()) return {};
  return it->second;
}

std::optional<PodId> ReplicaMap::owner(ShardId shard) const {
  const auto it = replicas_.find(shard);
  if (it == replicas_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

AssignmentMap ReplicaMap::owners() const {
  std::map<ShardId, std::optional<PodId>> owners;
  for (const auto& [shard, pods] : replicas_) {
    owners.emplace_hint(owners.end(), shard, pods.empty() ? std::nullopt : std::optional<PodId>(pods.front()));
  }
  return AssignmentMap::from_owners(std::move(owners), epoch_);
}

std::vector<ShardId> ReplicaMap::shards_of(const PodId& pod) const {
  std::vector<ShardId> shards;
  for (const auto& [shard, pods] : replicas_) {
    if (std::find(pods.begin(), pods.end(), pod) != pods.end()) shards.push_back(shard);
  }
  return shards;
}

std::vector<ShardId> ReplicaMap::unassigned_shards() const { return under_replicated(1); }

std::vector<ShardId> ReplicaMap::under_replicated(std::size_t wanted) const {
  std::vector<ShardId> shards;
  for (const auto& [shard, pods] : replicas_) {
    if (pods.size() < wanted) shards.push_back(shard);
  }
  return shards;
}

std::map<PodId, std::size_t> ReplicaMap::counts() const {
  std::map<PodId, std::size_t> counts;
  for (const auto& [shard, pods] : replicas_) {
    for (const PodId& pod : pods) ++counts[pod];
  }
  return counts;
}

std::size_t ReplicaMap::replica_count() const {
  std::size_t total = 0;
  for (const auto& [shard, pods] : replicas_) total += pods.size();
  return total;
}

ReplicaMap ReplicaMap::without_pod(const PodId& pod) const {
  ReplicaMap next = *this;
  bool changed = false;
  for (auto& [shard, pods] : next.replicas_) {
    if (auto it = std::find(pods.begin(), pods.end(), pod); it != pods.end()) {
      pods.erase(it);
      changed = true;
    }
  }
  if (!changed) return *this;
  next.epoch_ = epoch_ + 1;
  return next;
}

Result<ReplicaMap, PlanError> ReplicaMap::apply(const ReplicaPlan& plan) const {
  if (plan.empty()) return *this;
  // Made on a copy, move by move (a shard's additions build on each other); a move that does not
  // fit returns the error and the copy is dropped, so this map never changes half-way.
  ReplicaMap next = *this;
  for (const ReplicaMove& move : plan.moves) {
    const auto it = next.replicas_.find(move.shard);
    if (it == next.replicas_.end()) return Err{PlanError{PlanErrorKind::UnknownShard, move.shard}};
    auto& pods = it->second;
    if (move.to && std::find(pods.begin(), pods.end(), *move.to) != pods.end()) {
      return Err{PlanError{PlanErrorKind::ReplicaPresent, move.shard}};
    }
    if (move.from) {
      auto at = std::find(pods.begin(), pods.end(), *move.from);
      if (at == pods.end()) return Err{PlanError{PlanErrorKind::StaleOwner, move.shard}};
      if (move.to) {
        *at = *move.to;  // the new replica takes the old one's place: the owner stays first
      } else {
        pods.erase(at);
      }
    } else if (move.to) {
      pods.push_back(*move.to);
    }
  }
  next.epoch_ = epoch_ + 1;
  return next;
}

std::map<PodId, std::vector<ShardId>> ReplicaPlan::additions() const {
  std::map<PodId, std::vector<ShardId>> by_pod;
  for (const ReplicaMove& move : moves) {
    if (move.to) by_pod[*move.to].push_back(move.shard);
  }
  return by_pod;
}

std::map<PodId, std::vector<ShardId>> ReplicaPlan::removals() const {
  std::map<PodId, std::vector<ShardId>> by_pod;
  for (const ReplicaMove& move : moves) {
    if (move.from) by_pod[*move.from].push_back(move.shard);
  }
  return by_pod;
}

}  // namespace elfin::assignment
