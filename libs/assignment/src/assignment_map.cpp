#include <elfin/assignment/assignment_map.hpp>

#include <algorithm>

namespace elfin::assignment {

AssignmentMap AssignmentMap::unassigned(ShardId first, std::uint32_t count, std::uint64_t epoch) {
  AssignmentMap map;
  map.epoch_ = epoch;
  for (std::uint32_t i = 0; i < count; ++i) map.owners_.emplace_hint(map.owners_.end(), first + i, std::nullopt);
  return map;
}

AssignmentMap AssignmentMap::from_owners(std::map<ShardId, std::optional<PodId>> owners, std::uint64_t epoch) {
  AssignmentMap map;
  map.epoch_ = epoch;
  map.owners_ = std::move(owners);
  return map;
}

std::optional<PodId> AssignmentMap::owner(ShardId shard) const {
  const auto it = owners_.find(shard);
  if (it == owners_.end()) return std::nullopt;
  return it->second;
}

std::vector<ShardId> AssignmentMap::shards_of(const PodId& pod) const {
  std::vector<ShardId> shards;
  for (const auto& [shard, owner] : owners_) {
    if (owner == pod) shards.push_back(shard);
  }
  return shards;
}

std::vector<ShardId> AssignmentMap::unassigned_shards() const {
  std::vector<ShardId> shards;
  for (const auto& [shard, owner] : owners_) {
    if (!owner) shards.push_back(shard);
  }
  return shards;
}

std::map<PodId, std::size_t> AssignmentMap::counts() const {
  std::map<PodId, std::size_t> counts;
  for (const auto& [shard, owner] : owners_) {
    if (owner) ++counts[*owner];
  }
  return counts;
}

AssignmentMap AssignmentMap::without_pod(const PodId& pod) const {
  AssignmentMap next = *this;
  bool changed = false;
  for (auto& [shard, owner] : next.owners_) {
    if (owner == pod) {
      owner.reset();
      changed = true;
    }
  }
  if (!changed) return *this;
  next.epoch_ = epoch_ + 1;
  return next;
}

Result<AssignmentMap, PlanError> AssignmentMap::apply(const RebalancePlan& plan) const {
  if (plan.empty()) return *this;
  // Checked against this map before anything is copied: a plan that does not fit costs no copy,
  // and the copy below cannot fail half-way.
  std::vector<ShardId> moved;
  moved.reserve(plan.moves.size());
  for (const Move& move : plan.moves) {
    const auto it = owners_.find(move.shard);
    if (it == owners_.end()) return Err{PlanError{PlanErrorKind::UnknownShard, move.shard}};
    if (it->second != move.from) return Err{PlanError{PlanErrorKind::StaleOwner, move.shard}};
    moved.push_back(move.shard);
  }
  std::sort(moved.begin(), moved.end());
  if (auto twice = std::adjacent_find(moved.begin(), moved.end()); twice != moved.end()) {
    return Err{PlanError{PlanErrorKind::DuplicateShard, *twice}};
  }
  AssignmentMap next = *this;
  for (const Move& move : plan.moves) next.owners_.find(move.shard)->second = move.to;
  next.epoch_ = epoch_ + 1;
  return next;
}

std::string_view to_string(PlanErrorKind kind) noexcept {
  switch (kind) {
    case PlanErrorKind::UnknownShard:
      return "the map has no such shard";
    case PlanErrorKind::StaleOwner:
      return "the move does not start from the shard's owner in the map";
    case PlanErrorKind::DuplicateShard:
      return "the shard is moved twice";
    case PlanErrorKind::ReplicaPresent:
      return "the move's target holds a replica of the shard already";
  }
  return "unknown plan error";
}

std::string format_shard_ids(const std::vector<ShardId>& ascending) {
  std::string text;
  for (std::size_t i = 0; i < ascending.size();) {
    std::size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? fmt::format("{}", ascending[i]) : fmt::format("{}-{}", ascending[i], ascending[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace elfin::assignment
