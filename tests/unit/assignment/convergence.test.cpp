// Randomized convergence: from arbitrary maps (uneven, partly unassigned, partly owned by pods that
// are gone), regular rounds reach a balanced map in a bounded number of rounds. Seeded, so a
// failure names a seed that reproduces it.
#include <random>
#include <set>

#include "assignment_test_support.hpp"

using namespace assignment_test;

namespace {

struct Scenario {
  std::vector<Pod> pods;
  AssignmentMap map;
};

// Up to 100 pods and 1000 shards, numbered from 0 or 1; each shard unassigned, owned by a pod
// that is gone, or owned by one of the pods — picked with a skew, so some pods start far above
// the average and others empty.
Scenario random_scenario(std::mt19937& random, PodVersion version_of_all = {1}) {
  Scenario s;
  const int pod_count = std::uniform_int_distribution<int>(1, 100)(random);
  const int shard_count = std::uniform_int_distribution<int>(1, 1000)(random);
  const ShardId first = std::uniform_int_distribution<ShardId>(0, 1)(random);
  for (int i = 1; i <= pod_count; ++i) s.pods.push_back(pod(i, version_of_all));
  const std::vector<Pod> gone{pod(1001), pod(1002)};
  // Half the maps have no orphans, so that only capped balancing rounds move shards.
  const bool orphans = std::uniform_int_distribution<int>(0, 1)(random) == 1;
  const int unassigned_percent = orphans ? std::uniform_int_distribution<int>(0, 100)(random) : 0;
  const int gone_percent = orphans ? std::uniform_int_distribution<int>(0, 20)(random) : 0;
  const int crowd = std::uniform_int_distribution<int>(1, pod_count)(random);  // pods that own at start
  std::map<ShardId, std::optional<PodId>> owners;
  for (int k = 0; k < shard_count; ++k) {
    const int roll = std::uniform_int_distribution<int>(0, 99)(random);
    std::optional<PodId> owner;
    if (roll < unassigned_percent) {
      owner = std::nullopt;
    } else if (roll < unassigned_percent + gone_percent) {
      owner = gone[static_cast<std::size_t>(k) % 2].id;
    } else {
      owner = s.pods[std::uniform_int_distribution<std::size_t>(0, static_cast<std::size_t>(crowd) - 1)(random)].id;
    }
    owners.emplace(first + static_cast<ShardId>(k), owner);
  }
  s.map = AssignmentMap::from_owners(std::move(owners), std::uniform_int_distribution<std::uint64_t>(0, 1000)(random));
  return s;
}

}  // namespace

TEST_CASE("random maps converge within a bounded number of rounds to loads within one of each other", "[assignment]") {
  for (unsigned seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    Scenario s = random_scenario(random);
    const std::size_t shard_count = s.map.shard_count();
    std::set<ShardId> shards_before;
    for (const auto& [shard, owner] : s.map.owners()) shards_before.insert(shard);

    // A pod fills at most max_gain shards per round, and needs at most shards / pods of them; the
    // orphan round, the rounds where a pod that lost cannot gain, and the last single moves add a
    // few more. 2 * ceil(1 / rebalance_rate) + 5 = 105 bounds it with room to spare.
    const auto result = run_until_stable(s.pods, s.map, {}, 105);
    const AssignmentMap& map = result.map;

    std::set<ShardId> shards_after;
    for (const auto& [shard, owner] : map.owners()) {
      shards_after.insert(shard);
      REQUIRE(owner.has_value());
    }
    CHECK(shards_after == shards_before);
    const auto counted = loads(map, s.pods);
    std::size_t owned = 0;
    for (std::size_t load : counted) owned += load;
    CHECK(owned == shard_count);  // every shard owned by exactly one of the registered pods
    CHECK(spread(counted) <= 1);
    CHECK(map.epoch() == s.map.epoch() + static_cast<std::uint64_t>(result.rounds));
  }
}

TEST_CASE("a new pod fills at the capped rate: 1000 shards on one pod, a second joins, 25 rounds", "[assignment]") {
  // The slowest start: every shard on one pod. The newcomer gains 20 a round (1000 x 0.02) and
  // needs 500.
  const auto all = pods(2);
  const auto result = run_until_stable(all, map_with_loads({all[0]}, {1000}));
  CHECK(result.rounds == 25);
  CHECK(loads(result.map, all) == std::vector<std::size_t>{500, 500});
}

TEST_CASE("with mixed versions, random rounds give shards only to newest pods and never rebalance", "[assignment]") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    Scenario s = random_scenario(random);
    // Give the pods one of three versions at random (at least one pod is v3 or the max is lower).
    for (Pod& p : s.pods) p.version = PodVersion{std::uniform_int_distribution<std::uint32_t>(1, 3)(random)};
    PodVersion newest;
    bool mixed = false;
    for (const Pod& p : s.pods) newest = std::max(newest, p.version);
    for (const Pod& p : s.pods) mixed = mixed || p.version != newest;
    auto is_newest = [&](const PodId& id) {
      for (const Pod& p : s.pods) {
        if (p.id == id) return p.version == newest;
      }
      return false;
    };
    AssignmentMap map = s.map;
    for (int round = 0; round < 5; ++round) {
      const bool had_orphans = [&] {
        for (const auto& [shard, owner] : map.owners()) {
          if (!owner || !std::any_of(s.pods.begin(), s.pods.end(), [&](const Pod& p) { return p.id == *owner; }))
            return true;
        }
        return false;
      }();
      RebalancePlan plan;
      map = run_round(s.pods, map, RoundKind::Regular, {}, &plan);
      for (const Move& move : plan.moves) {
        CHECK(is_newest(move.to));
        // Only orphans move while versions are mixed.
        if (mixed)
          CHECK((!move.from ||
                 !std::any_of(s.pods.begin(), s.pods.end(), [&](const Pod& p) { return p.id == *move.from; })));
      }
      if (mixed && !had_orphans) CHECK(plan.empty());
    }
    CHECK(map.unassigned_shards().empty());
  }
}
