// AssignmentMap and RebalancePlan as values: epochs, applying plans, the readable forms.
#include "assignment_test_support.hpp"

using namespace assignment_test;

TEST_CASE("every new map has a higher epoch, and a round that moves nothing makes none", "[assignment]") {
  const auto all = pods(2);
  const auto empty = AssignmentMap::unassigned(0, 8, 41);
  CHECK(empty.epoch() == 41);
  const auto placed = run_round(all, empty, RoundKind::Immediate);
  CHECK(placed.epoch() == 42);
  const auto same = run_round(all, placed, RoundKind::Regular);
  CHECK(same == placed);
  const auto without = placed.without_pod(all[0].id);
  CHECK(without.epoch() == 43);
  CHECK(without.unassigned_shards().size() == 4);
  CHECK(without.without_pod(all[0].id) == without);  // owned nothing: the same map
  CHECK(without.without_pod(pod(9).id).epoch() == 43);
}

TEST_CASE("applying a plan moves exactly its shards", "[assignment]") {
  const auto all = pods(3);
  const auto map = map_with_loads(all, {4, 0, 0}, 1);
  const RebalancePlan plan{{Move{2, all[0].id, all[1].id}, Move{5, std::nullopt, all[2].id}}};
  const auto next = map.apply(plan).value();
  CHECK(next.owner(1) == all[0].id);
  CHECK(next.owner(2) == all[1].id);
  CHECK(next.owner(5) == all[2].id);
  CHECK(next.shards_of(all[0].id) == std::vector<ShardId>{1, 3, 4});
  CHECK(plan.assignments() == std::map<PodId, std::vector<ShardId>>{{all[1].id, {2}}, {all[2].id, {5}}});
  CHECK(plan.unassignments() == std::map<PodId, std::vector<ShardId>>{{all[0].id, {2}}});
}

TEST_CASE("a plan that does not fit the map is refused, naming the shard", "[assignment]") {
  const auto all = pods(2);
  const auto map = map_with_loads(all, {2, 2});
  auto error_of = [&](RebalancePlan plan) {
    auto next = map.apply(plan);
    REQUIRE_FALSE(next.ok());
    return next.error();
  };
  CHECK(error_of({{Move{9, std::nullopt, all[0].id}}}) == PlanError{PlanErrorKind::UnknownShard, 9});
  CHECK(error_of({{Move{1, all[1].id, all[0].id}}}) == PlanError{PlanErrorKind::StaleOwner, 1});
  CHECK(error_of({{Move{1, std::nullopt, all[1].id}}}) == PlanError{PlanErrorKind::StaleOwner, 1});
  CHECK(error_of({{Move{1, all[0].id, all[1].id}, Move{1, all[0].id, all[1].id}}}) ==
        PlanError{PlanErrorKind::DuplicateShard, 1});
  CHECK(fmt::format("{}", PlanError{PlanErrorKind::StaleOwner, 1}) ==
        "the plan does not fit the map at shard 1: the move does not start from the shard's owner in the map");
}

TEST_CASE("maps and plans print readably, shard runs as ranges", "[assignment]") {
  const auto all = pods(2);
  const auto map = map_with_loads(all, {3, 2}, 2, 0);
  CHECK(fmt::format("{}", map) ==
        "epoch 0, 7 shards: pod-001:54321#1 owns 3 (0-2); pod-002:54321#1 owns 2 (3-4); unassigned 2 (5-6)");
  CHECK(format_shard_ids({1, 2, 3, 7, 9, 10}) == "1-3,7,9-10");
  CHECK(fmt::format("{}", AssignmentMap{}) == "epoch 0, 0 shards");
  const RebalancePlan plan{{Move{5, std::nullopt, all[0].id}, Move{6, all[1].id, all[0].id}}};
  CHECK(fmt::format("{}", plan) ==
        "2 moves: shard 5: (unassigned) -> pod-001:54321#1; shard 6: pod-002:54321#1 -> pod-001:54321#1");
  CHECK(fmt::format("{}", RebalancePlan{}) == "no moves");
}
