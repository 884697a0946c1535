// A simulated rolling update: pods at v1, then one by one a v2 pod joins and a v1 pod leaves. The
// properties the study asks of it (§4.3 item 25, invariant I4): no shard goes to a v1 pod while a
// v2 pod exists, nothing is rebalanced until every pod runs v2, and each shard moves at most once
// per replaced pod — here, at most once during the whole rollout.
#include <set>

#include "assignment_test_support.hpp"

using namespace assignment_test;

namespace {

struct Rollout {
  int pods = 10;
  std::uint32_t shards = 300;
  bool add_all_first = false;  // start every v2 pod before stopping any v1 pod
};

void check_rollout(const Rollout& r) {
  const PodVersion v1{1, 0, 0};
  const PodVersion v2{1, 1, 0};
  std::vector<Pod> running;
  for (int i = 1; i <= r.pods; ++i) running.push_back(pod(i, v1));
  AssignmentMap map = run_round(running, AssignmentMap::unassigned(1, r.shards), RoundKind::Immediate);
  map = run_until_stable(running, map).map;
  REQUIRE(spread(loads(map, running)) <= 1);

  std::map<ShardId, int> moved;
  std::set<PodId> v2_pods;
  auto record = [&](const RebalancePlan& plan) {
    for (const Move& move : plan.moves) {
      ++moved[move.shard];
      if (!v2_pods.empty()) {
        INFO(fmt::format("{}", move));
        CHECK(v2_pods.contains(move.to));  // never to a v1 pod once a v2 pod exists
      }
    }
  };
  auto start_v2 = [&](int i) {
    running.push_back(pod(100 + i, v2));
    v2_pods.insert(running.back().id);
    // Versions are mixed now (a v1 pod is still running): the periodic round moves nothing.
    RebalancePlan plan;
    map = run_round(running, map, RoundKind::Regular, {}, &plan);
    CHECK(plan.empty());
  };
  auto stop_v1 = [&](int i) {
    const PodId leaving = pod(i, v1).id;
    running.erase(std::find_if(running.begin(), running.end(), [&](const Pod& p) { return p.id == leaving; }));
    map = map.without_pod(leaving);
    RebalancePlan plan;
    map = run_round(running, map, RoundKind::Immediate, {}, &plan);
    record(plan);
    CHECK(map.unassigned_shards().empty());
    // Anything else would be a rebalance during the rollout.
    const bool still_mixed = std::any_of(running.begin(), running.end(), [&](const Pod& p) { return p.version == v1; });
    if (still_mixed) {
      map = run_round(running, map, RoundKind::Regular, {}, &plan);
      CHECK(plan.empty());
    }
  };

  if (r.add_all_first) {
    for (int i = 1; i <= r.pods; ++i) start_v2(i);
    for (int i = 1; i <= r.pods; ++i) stop_v1(i);
  } else {
    for (int i = 1; i <= r.pods; ++i) {
      start_v2(i);
      stop_v1(i);
    }
  }
  for (const auto& [shard, count] : moved) {
    INFO("shard " << shard);
    CHECK(count == 1);  // every shard lived on a v1 pod, so each moved exactly once
  }
  CHECK(moved.size() == r.shards);

  // All v2 now: regular rounds may even out what the rollout left, and then stop.
  const auto after = run_until_stable(running, map);
  CHECK(spread(loads(after.map, running)) <= 1);
  for (const auto& [shard, count] : after.moves_per_shard) {
    INFO("shard " << shard);
    CHECK(moved[shard] + count <= r.pods);  // at most once per replaced pod, over everything
  }
}

}  // namespace

TEST_CASE("rolling update, each v2 pod joining before a v1 pod leaves: shards move once, only to v2 pods",
          "[assignment]") {
  check_rollout({.pods = 10, .shards = 300});
  check_rollout({.pods = 7, .shards = 1024});
}

TEST_CASE("rolling update, every v2 pod started before any v1 pod stops: shards move once, only to v2 pods",
          "[assignment]") {
  check_rollout({.pods = 10, .shards = 300, .add_all_first = true});
  check_rollout({.pods = 7, .shards = 1024, .add_all_first = true});
}

TEST_CASE("after a rolling update balanced by replacement, the one regular round finds nothing to move",
          "[assignment]") {
  // 10 pods of 30 replaced one for one: the orphans of the k-th v1 pod all go to the k-th v2
  // pod, the least loaded, so the rollout ends balanced.
  const PodVersion v1{1};
  const PodVersion v2{2};
  std::vector<Pod> running = pods(10, v1);
  AssignmentMap map =
      run_until_stable(running, run_round(running, AssignmentMap::unassigned(1, 300), RoundKind::Immediate)).map;
  for (int i = 1; i <= 10; ++i) {
    running.push_back(pod(100 + i, v2));
    running.erase(running.begin());
    map = run_round(running, map.without_pod(pod(i, v1).id), RoundKind::Immediate);
    CHECK(map.shards_of(pod(100 + i, v2).id).size() == 30);
  }
  CHECK(plan_rebalance(running, map, RoundKind::Regular).empty());
}
