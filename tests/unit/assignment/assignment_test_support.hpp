// Helpers shared by the assignment tests: pods with readable ids, maps with given loads, and a
// loop that runs rounds (plan, then apply) until nothing moves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/assignment/assignment_map.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance.hpp>

namespace assignment_test {

using namespace elfin::assignment;

/// `pod-007:54321#1`, version `version`; pods sort by their number.
inline Pod pod(int n, PodVersion version = {1}, std::uint64_t incarnation = 1) {
  return Pod{PodId{fmt::format("pod-{:03}:54321", n), incarnation}, std::move(version)};
}

/// Pods 1..count, all at `version`.
inline std::vector<Pod> pods(int count, PodVersion version = {1}) {
  std::vector<Pod> result;
  for (int i = 1; i <= count; ++i) result.push_back(pod(i, version));
  return result;
}

/// Shards first.. in order: `loads[i]` consecutive ones to `owners[i]`, then `unassigned` more.
inline AssignmentMap map_with_loads(const std::vector<Pod>& owners, const std::vector<int>& loads, int unassigned = 0,
                                    ShardId first = 1) {
  REQUIRE(owners.size() == loads.size());
  std::map<ShardId, std::optional<PodId>> shards;
  ShardId next = first;
  for (std::size_t i = 0; i < owners.size(); ++i) {
    for (int k = 0; k < loads[i]; ++k) shards.emplace(next++, owners[i].id);
  }
  for (int k = 0; k < unassigned; ++k) shards.emplace(next++, std::nullopt);
  return AssignmentMap::from_owners(std::move(shards), 0);
}

/// The load of each pod in `of`, in that order (0 for a pod owning nothing).
inline std::vector<std::size_t> loads(const AssignmentMap& map, const std::vector<Pod>& of) {
  const auto counts = map.counts();
  std::vector<std::size_t> result;
  for (const Pod& p : of) {
    const auto it = counts.find(p.id);
    result.push_back(it == counts.end() ? 0 : it->second);
  }
  return result;
}

/// One round: its plan, applied (a plan always fits the map it was made from).
inline AssignmentMap run_round(const std::vector<Pod>& pods, const AssignmentMap& map, RoundKind kind,
                               const RebalanceOptions& options = {}, RebalancePlan* plan_out = nullptr) {
  RebalancePlan plan = plan_rebalance(pods, map, kind, options);
  auto next = map.apply(plan);
  INFO(fmt::format("{}", plan));
  REQUIRE(next.ok());
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return *next;
}

struct Converged {
  AssignmentMap map;
  int rounds = 0;  ///< rounds that moved something
  std::map<ShardId, int> moves_per_shard;
};

/// Regular rounds until one moves nothing; fails the test after `max_rounds` rounds that moved.
inline Converged run_until_stable(const std::vector<Pod>& pods, AssignmentMap map, const RebalanceOptions& options = {},
                                  int max_rounds = 1000) {
  Converged result{std::move(map), 0, {}};
  while (true) {
    RebalancePlan plan;
    result.map = run_round(pods, result.map, RoundKind::Regular, options, &plan);
    if (plan.empty()) return result;
    for (const Move& move : plan.moves) ++result.moves_per_shard[move.shard];
    ++result.rounds;
    REQUIRE(result.rounds <= max_rounds);
  }
}

inline std::size_t spread(const std::vector<std::size_t>& loads) {
  const auto [min, max] = std::minmax_element(loads.begin(), loads.end());
  return *max - *min;
}

}  // namespace assignment_test
