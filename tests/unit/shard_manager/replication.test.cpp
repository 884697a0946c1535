// The shard manager with `replication_factor` above 1, with fake pods on virtual time: every shard
// on that many distinct pods (the owner first, published in every map), counts within one of each
// other, and a dead pod's replicas replaced on the others once the health check drops it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager/config.hpp>

#include "cluster.hpp"

using namespace std::chrono_literals;
using elfin::protocols::sharding::Assignments;
using elfin::protocols::sharding::PodRef;
using elfin::test::Cluster;

namespace {

// 64 shards, 3 replicas each; a regular round may move up to 32 replicas to one pod.
constexpr const char* kReplicated =
    "shard_function = \"jump-xxh64/1:64\"\nrebalance_rate = 0.5\nreplication_factor = 3";

/// Every shard of `map` has `wanted` replicas on distinct registered pods, the owner first.
void check_replica_sets(const Assignments& map, std::size_t wanted) {
  for (std::uint32_t shard = map.first_shard; shard < map.first_shard + map.owners.size(); ++shard) {
    const auto set = map.replica_set(shard);
    std::set<PodRef> distinct;
    for (const auto& entry : set) distinct.insert(entry.pod);
    INFO("shard " << shard);
    REQUIRE(set.size() == wanted);
    REQUIRE(distinct.size() == wanted);
    REQUIRE(map.owner(shard)->pod == set.front().pod);
  }
}

/// The checks fake pods make that hold with replicas too (a shard held by several pods is the
/// point here, so that one is left out).
void check_saved_before_used(Cluster& cluster) {
  for (const auto& v : cluster.world().violations()) {
    if (v.find("held by") == std::string::npos) FAIL(v);
  }
}

}  // namespace

TEST_CASE("shard manager: with replication_factor 3 every shard is on 3 distinct pods, counts within one",
          "[shard_manager]") {
  Cluster cluster(kReplicated);
  REQUIRE(cluster.join(1));
  cluster.settle();
  check_replica_sets(cluster.assignments(), 1);  // one pod: one replica each (fewer pods than the factor)
  REQUIRE(cluster.join(2));
  REQUIRE(cluster.join(3));
  cluster.settle();
  // Each join was a repair (a missing replica per shard), made at once.
  check_replica_sets(cluster.assignments(), 3);
  REQUIRE(cluster.join(4));
  cluster.settle();
  for (int round = 0; round < 4; ++round) cluster.advance(20s);

  const Assignments map = cluster.assignments();
  CHECK(map.replication_factor == 3);
  check_replica_sets(map, 3);
  for (std::uint32_t key = 1; key <= 4; ++key) {
    INFO("pod " << key);
    std::size_t held = 0;
    for (std::uint32_t shard = 0; shard < 64; ++shard) {
      const auto set = map.replica_set(shard);
      held += static_cast<std::size_t>(
          std::count_if(set.begin(), set.end(), [&](const auto& e) { return e.pod == cluster.pod(key); }));
    }
    CHECK(held == 48);  // 64 x 3 / 4
    // The pods were told: they hold what the map says, and saw its epoch.
    CHECK(cluster.world().held_by(cluster.pod(key)).size() == 48);
    CHECK(cluster.world().notified_epoch(cluster.pod(key)) == map.epoch);
  }
  CHECK(cluster.metric("elfin_shard_manager_under_replicated_shards") == 0);
  check_saved_before_used(cluster);
}

TEST_CASE("shard manager: a dead pod's shards get replacement replicas once the health check drops it",
          "[shard_manager]") {
  Cluster cluster(kReplicated);
  for (std::uint32_t key = 1; key <= 4; ++key) REQUIRE(cluster.join(key));
  cluster.settle();
  for (int round = 0; round < 4; ++round) cluster.advance(20s);
  check_replica_sets(cluster.assignments(), 3);

  cluster.kill(4);  // no unregister
  cluster.settle();
  CHECK(cluster.assignments().pods.size() == 4);  // nobody noticed yet
  cluster.advance(40s);                           // 120 s since the start: the periodic health check ran
  const Assignments map = cluster.assignments();
  REQUIRE(map.pods.size() == 3);
  check_replica_sets(map, 3);  // every shard back to 3 replicas, on the 3 pods left
  for (std::uint32_t key = 1; key <= 3; ++key) CHECK(cluster.world().held_by(cluster.pod(key)).size() == 64);
  CHECK(cluster.metric("elfin_shard_manager_under_replicated_shards") == 0);
  check_saved_before_used(cluster);
}

TEST_CASE("shard manager: a replica set keeps its owner when another of its pods leaves", "[shard_manager]") {
  Cluster cluster(kReplicated);
  for (std::uint32_t key = 1; key <= 5; ++key) REQUIRE(cluster.join(key));
  cluster.settle();
  for (int round = 0; round < 4; ++round) cluster.advance(20s);
  const Assignments before = cluster.assignments();
  REQUIRE(cluster.leave(5));
  cluster.settle();
  const Assignments after = cluster.assignments();
  check_replica_sets(after, 3);
  for (std::uint32_t shard = 0; shard < 64; ++shard) {
    if (before.owner(shard)->pod != cluster.pod(5)) CHECK(after.owner(shard)->pod == before.owner(shard)->pod);
  }
  check_saved_before_used(cluster);
}

TEST_CASE("shard manager: replication_factor 0 is refused with its file and line", "[shard_manager]") {
  auto section = elfin::AnyConfig::from_toml("rebalance_rate = 0.5\nreplication_factor = 0\n", "manager.toml");
  REQUIRE(section);
  auto config = section->decode<elfin::actors::shard_manager::Config>();
  REQUIRE(config);
  CHECK(elfin::actors::shard_manager::Config{}.replication_factor == 1);
  const auto problems = elfin::actors::shard_manager::validate(*config, *section);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "manager.toml:2: replication_factor: must be at least 1");
}
