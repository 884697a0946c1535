// The rebalance rules, one behaviour per test case: the sharding study's §4.2 items 6-12 and the
// cases of Shardcake's own ShardManagerSpec, on the pure function (no actors, no clock).
#include <set>

#include "assignment_test_support.hpp"

using namespace assignment_test;

TEST_CASE("a balanced map produces no moves", "[assignment]") {
  const auto all = pods(3);
  const auto map = map_with_loads(all, {100, 100, 100});
  CHECK(plan_rebalance(all, map, RoundKind::Regular).empty());
  CHECK(plan_rebalance(all, map, RoundKind::Immediate).empty());
}

TEST_CASE("a difference of one shard produces no move", "[assignment]") {
  const auto all = pods(2);
  CHECK(plan_rebalance(all, map_with_loads(all, {11, 10}), RoundKind::Regular).empty());
  CHECK(plan_rebalance(all, map_with_loads(all, {10, 11}), RoundKind::Regular).empty());
  // With a remainder the average rounds down: 7 shards over 3 pods, 3/2/2, is balanced.
  const auto three = pods(3);
  CHECK(plan_rebalance(three, map_with_loads(three, {3, 2, 2}), RoundKind::Regular).empty());
}

TEST_CASE("a difference of two shards produces exactly one move, to the least-loaded pod", "[assignment]") {
  const auto all = pods(3);
  const auto map = map_with_loads(all, {11, 10, 9});
  const auto plan = plan_rebalance(all, map, RoundKind::Regular);
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].from == all[0].id);
  CHECK(plan.moves[0].to == all[2].id);
  CHECK(loads(map.apply(plan).value(), all) == std::vector<std::size_t>{10, 10, 10});
}

TEST_CASE("the shard goes to the pod with the fewest shards", "[assignment]") {
  const auto all = pods(4);
  const auto map = map_with_loads(all, {20, 10, 5, 8});
  const auto plan = plan_rebalance(all, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 1.0});
  REQUIRE_FALSE(plan.empty());
  // The fullest pod's extras are placed first, and the first goes to the emptiest pod.
  CHECK(plan.moves.front().from == all[0].id);
  CHECK(plan.moves.front().to == all[2].id);
}

TEST_CASE("the fullest pod's extras are placed first", "[assignment]") {
  // 24 shards, average 8, at most 3 gained per pod (24 x 0.125). Pod 2 (14) is fuller than pod
  // 1 (10): the newcomer's three go to relieve pod 2, not pod 1, whose shards have lower ids.
  const auto all = pods(3);
  const auto map = map_with_loads(all, {10, 14, 0});
  const auto plan = plan_rebalance(all, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 0.125});
  REQUIRE(plan.moves.size() == 3);
  for (const Move& move : plan.moves) CHECK(move.from == all[1].id);
}

TEST_CASE("the first pod to register gets every shard", "[assignment]") {
  const auto one = pods(1);
  const auto map = AssignmentMap::unassigned(1, 300);
  const auto next = run_round(one, map, RoundKind::Immediate);
  CHECK(loads(next, one) == std::vector<std::size_t>{300});
  CHECK(next.unassigned_shards().empty());
}

TEST_CASE("with no pods nothing moves", "[assignment]") {
  CHECK(plan_rebalance({}, AssignmentMap::unassigned(1, 300), RoundKind::Regular).empty());
  CHECK(plan_rebalance({}, AssignmentMap::unassigned(1, 300), RoundKind::Immediate).empty());
  CHECK(plan_rebalance(pods(3), AssignmentMap{}, RoundKind::Regular).empty());
}

TEST_CASE("pods joining one at a time up to 30 with 300 shards end with exactly 10 each", "[assignment]") {
  SECTION("one uncapped round after each join") {
    std::vector<Pod> joined;
    AssignmentMap map = AssignmentMap::unassigned(1, 300);
    for (int i = 1; i <= 30; ++i) {
      joined.push_back(pod(i));
      map = run_round(joined, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 1.0});
    }
    CHECK(loads(map, joined) == std::vector<std::size_t>(30, 10));
  }
  SECTION("capped rounds until stable after each join") {
    std::vector<Pod> joined;
    AssignmentMap map = AssignmentMap::unassigned(1, 300);
    for (int i = 1; i <= 30; ++i) {
      joined.push_back(pod(i));
      map = run_until_stable(joined, map).map;
    }
    CHECK(loads(map, joined) == std::vector<std::size_t>(30, 10));
  }
}

TEST_CASE("after convergence loads differ by at most one, every shard has one owner, the total is unchanged",
          "[assignment]") {
  const auto all = pods(7);
  // Uneven, with some shards unassigned and some owned by a pod that is gone.
  auto gone = pod(99);
  auto start = map_with_loads({all[0], all[1], gone}, {500, 200, 100}, 224, 0);
  const auto result = run_until_stable(all, start);
  const auto& map = result.map;
  CHECK(map.shard_count() == 1024);
  CHECK(map.owners().begin()->first == 0);
  CHECK(map.owners().rbegin()->first == 1023);
  CHECK(map.unassigned_shards().empty());
  std::size_t owned = 0;
  for (std::size_t load : loads(map, all)) owned += load;
  CHECK(owned == 1024);  // so no shard is owned by a pod outside `all`
  CHECK(spread(loads(map, all)) <= 1);
}

TEST_CASE("in a regular round no pod gains more than ceil(shards x rebalance_rate)", "[assignment]") {
  CHECK(max_gain_per_round(300, 0.02) == 6);
  CHECK(max_gain_per_round(1024, 0.02) == 21);
  CHECK(max_gain_per_round(100, 0.02) == 2);
  CHECK(max_gain_per_round(300, 0.0) == 0);
  CHECK(max_gain_per_round(300, 1e-15) == 1);
  CHECK(max_gain_per_round(300, 1.0) == 300);
  // 20 pods of 15, then 5 join: each newcomer gets exactly 6 in the first round and 6 in the
  // second (Shardcake's scale-out simulation), and then everyone holds 12.
  auto all = pods(20);
  AssignmentMap map = map_with_loads(all, std::vector<int>(20, 15));
  for (int i = 21; i <= 25; ++i) all.push_back(pod(i));
  RebalancePlan plan;
  map = run_round(all, map, RoundKind::Regular, {}, &plan);
  for (const auto& [to, shards] : plan.assignments()) CHECK(shards.size() <= 6);
  const auto after_one = loads(map, all);
  for (int i = 20; i < 25; ++i) CHECK(after_one[static_cast<std::size_t>(i)] == 6);
  map = run_round(all, map, RoundKind::Regular, {}, &plan);
  for (const auto& [to, shards] : plan.assignments()) CHECK(shards.size() <= 6);
  CHECK(loads(map, all) == std::vector<std::size_t>(25, 12));
  CHECK(plan_rebalance(all, map, RoundKind::Regular).empty());
}

TEST_CASE("unassigned shards are all placed at once, with no cap", "[assignment]") {
  // 25 pods of 12, five leave: their 60 shards go to the 20 others in one round, 3 each.
  const auto all = pods(25);
  AssignmentMap map = map_with_loads(all, std::vector<int>(25, 12));
  const std::vector<Pod> staying(all.begin(), all.begin() + 20);
  for (int i = 20; i < 25; ++i) map = map.without_pod(all[static_cast<std::size_t>(i)].id);
  REQUIRE(map.unassigned_shards().size() == 60);
  SECTION("in an immediate round") {
    map = run_round(staying, map, RoundKind::Immediate);
    CHECK(loads(map, staying) == std::vector<std::size_t>(20, 15));
  }
  SECTION("in a regular round, which places orphans first") {
    map = run_round(staying, map, RoundKind::Regular);
    CHECK(loads(map, staying) == std::vector<std::size_t>(20, 15));
  }
  SECTION("even with the rate set to zero") {
    map = run_round(staying, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 0.0});
    CHECK(map.unassigned_shards().empty());
  }
}

TEST_CASE("a pod that loses a shard in a round gains none in that round", "[assignment]") {
  // 32 shards, average 8, at most 5 gained per pod (32 x 0.15 = 4.8). Pod 1 gives 5 each to pods
  // 3 and 4 and drops to 10; pods 3 and 4 are then full for this round. Pod 2 (12) still has
  // extras, and pod 1 would be the place for them (10 + 1 < 12) — but pod 1 lost shards in this
  // round, so pod 2's extras stay where they are until the next one.
  const auto all = pods(4);
  const auto map = map_with_loads(all, {20, 12, 0, 0});
  REQUIRE(max_gain_per_round(32, 0.15) == 5);
  const auto plan = plan_rebalance(all, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 0.15});
  CHECK(plan.moves.size() == 10);
  for (const Move& move : plan.moves) {
    CHECK(move.from == all[0].id);
    CHECK(move.to != all[0].id);
  }
  CHECK(loads(map.apply(plan).value(), all) == std::vector<std::size_t>{10, 12, 5, 5});
}

TEST_CASE("while pod versions are mixed, a regular round moves nothing", "[assignment]") {
  const std::vector<Pod> all{pod(1, {1, 0}), pod(2, {1, 0}), pod(3, {1, 1})};
  const auto map = map_with_loads(all, {150, 150, 0});
  CHECK(plan_rebalance(all, map, RoundKind::Regular, RebalanceOptions{.rebalance_rate = 1.0}).empty());
}

TEST_CASE("unassigned shards go only to pods of the newest version", "[assignment]") {
  const std::vector<Pod> all{pod(1, {1, 0}), pod(2, {1, 0}), pod(3, {1, 1}), pod(4, {1, 1})};
  auto map = map_with_loads(all, {100, 100, 90, 10}, 50);
  const auto plan = plan_rebalance(all, map, RoundKind::Immediate);
  CHECK(plan.moves.size() == 50);
  for (const Move& move : plan.moves) {
    CHECK_FALSE(move.from.has_value());
    CHECK((move.to == all[2].id || move.to == all[3].id));
  }
  // Each to the least loaded of the two: all 50 to pod 4, which stays below pod 3.
  CHECK(loads(map.apply(plan).value(), all) == std::vector<std::size_t>{100, 100, 90, 60});
}

TEST_CASE("an older pod gets nothing while a newer one exists, even when it is emptier", "[assignment]") {
  const std::vector<Pod> all{pod(1, {2}), pod(2, PodVersion::parse("1.9.9"))};
  const auto map = map_with_loads({all[0]}, {10}, 10);
  const auto next = run_round(all, map, RoundKind::Immediate);
  CHECK(loads(next, all) == std::vector<std::size_t>{20, 0});
}

TEST_CASE("a plan made from an older map is refused, so rounds cannot interleave", "[assignment]") {
  const auto all = pods(2);
  const auto map = map_with_loads(all, {20, 0});
  const auto first = plan_rebalance(all, map, RoundKind::Regular);
  REQUIRE_FALSE(first.empty());
  const auto next = map.apply(first).value();
  // Applying the same plan again: its moves no longer start from the shards' owners.
  auto again = next.apply(first);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().kind == PlanErrorKind::StaleOwner);
  CHECK(again.error().shard == first.moves.front().shard);
}

TEST_CASE("a pod restarted at the same address is a new pod: the old incarnation's shards are orphans",
          "[assignment]") {
  const Pod old_pod = pod(1, {1}, 7);
  const Pod other = pod(2);
  const Pod restarted = pod(1, {1}, 8);
  const auto map = map_with_loads({old_pod, other}, {10, 10});
  const std::vector<Pod> registered{restarted, other};
  const auto plan = plan_rebalance(registered, map, RoundKind::Regular);
  // All ten are placed (no cap), from the old incarnation, and split by load.
  REQUIRE(plan.moves.size() == 10);
  for (const Move& move : plan.moves) CHECK(move.from == old_pod.id);
  const auto next = map.apply(plan).value();
  CHECK(loads(next, registered) == std::vector<std::size_t>{10, 10});
  CHECK(next.shards_of(old_pod.id).empty());
}

TEST_CASE("the same input gives the same plan, whatever the order the pods are listed in", "[assignment]") {
  auto all = pods(10);
  const auto map = map_with_loads(all, {50, 40, 30, 20, 10, 0, 0, 0, 0, 0}, 150);
  const auto plan = plan_rebalance(all, map, RoundKind::Regular);
  std::reverse(all.begin(), all.end());
  CHECK(plan_rebalance(all, map, RoundKind::Regular) == plan);
  std::rotate(all.begin(), all.begin() + 3, all.end());
  CHECK(plan_rebalance(all, map, RoundKind::Regular) == plan);
  // A pod listed twice counts once.
  all.push_back(all.front());
  CHECK(plan_rebalance(all, map, RoundKind::Regular) == plan);
}

TEST_CASE("an immediate round places orphans only and leaves an unbalanced map alone", "[assignment]") {
  const auto all = pods(2);
  CHECK(plan_rebalance(all, map_with_loads(all, {30, 0}), RoundKind::Immediate).empty());
}
