// Pods while the shard manager is down (the sharding study's §4.3, item 24): a pod that starts
// then cannot join, a pod that stops then follows the graceful-stop policy, and once the manager is
// back the state converges. "Down" here is as the pods see it: their requests to the manager reach
// no one (PodCluster routes them nowhere). The manager itself keeps running, so it can still ping
// the pods; the tests pin what the pods do and where the shards end up.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>

#include <catch2/catch.hpp>

#include <elfin/protocols/sharding/manager_protocol.hpp>

#include "pod_cluster.hpp"

using elfin::test::eventually;
using elfin::test::PodCluster;

namespace {

/// Every shard is owned by exactly one pod's cache, and the map agrees with the caches.
bool one_owner_each(PodCluster& cluster, std::size_t pods) {
  const auto map = cluster.assignments();
  for (std::uint32_t shard = 0; shard < PodCluster::kShards; ++shard) {
    std::size_t owners = 0;
    std::size_t owner = 0;
    for (std::size_t pod = 1; pod <= pods; ++pod) {
      if (cluster.cache(pod).owns(shard)) {
        ++owners;
        owner = pod;
      }
    }
    if (owners != 1) return false;
    const auto in_map = map.owner(shard);
    if (!in_map || in_map->pod != PodCluster::ref(owner)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("sharding pods: a pod starting while the manager is down serves nothing, then joins when it is back",
          "[sharding]") {
  // Pod 3 cannot reach the manager from its start; pods 1 and 2 can.
  PodCluster cluster(3, "50ms", true, false, "", false, {3});
  REQUIRE(eventually([&] {
    return cluster.assignments().pods.size() == 2 && cluster.cache(1).owned().size() == 8 &&
           cluster.cache(2).owned().size() == 8;
  }));
  REQUIRE(eventually([&] { return cluster.cache(3).endpoint() != 0; }));
  // Pods 1 and 2 registered and were balanced by regular rounds meanwhile; pod 3 got nothing and
  // routes nothing: it holds no map.
  CHECK_FALSE(cluster.cache(3).ready());
  CHECK(cluster.cache(3).owned().empty());
  for (std::uint32_t shard = 0; shard < PodCluster::kShards; ++shard) {
    const auto route = cluster.cache(3).route(shard);
    CHECK_FALSE(route.local);
    CHECK_FALSE(route.owner);
  }
  const auto map = cluster.assignments();
  CHECK(std::none_of(map.pods.begin(), map.pods.end(), [](const auto& p) { return p.pod == PodCluster::ref(3); }));

  // The manager is back: pod 3's retried register gets through, and the next rounds give it its
  // share (16 shards over 3 pods: 5 or 6 each), every shard on exactly one pod.
  cluster.bring_manager_back();
  REQUIRE(eventually([&] {
    const std::size_t third = cluster.cache(3).owned().size();
    return cluster.assignments().pods.size() == 3 && (third == 5 || third == 6) && one_owner_each(cluster, 3);
  }));
  std::size_t total = 0;
  for (std::size_t pod = 1; pod <= 3; ++pod) {
    const std::size_t n = cluster.cache(pod).owned().size();
    CHECK((n == 5 || n == 6));
    total += n;
  }
  CHECK(total == PodCluster::kShards);
  CHECK(cluster.cache(3).ready());
}

TEST_CASE(
    "sharding pods: a pod stopped while the manager is down stops its entities, and its shards move once it is found "
    "dead",
    "[sharding]") {
  // The book's policy: the entities are stopped all the same, the unregister reaches no one, the
  // pod ends; the manager finds it dead by its health check and places its shards then.
  PodCluster cluster(2, "50ms", true, false, "", false, {}, "health_check_interval = \"100ms\"");
  REQUIRE(eventually([&] {
    return cluster.assignments().pods.size() == 2 && cluster.cache(1).owned().size() == 8 &&
           cluster.cache(2).owned().size() == 8;
  }));
  const auto owned = cluster.cache(1).owned();
  const std::set<std::uint32_t> held(owned.begin(), owned.end());

  cluster.host(1).clear();  // shards it handed over while the rounds balanced
  cluster.take_manager_down();
  cluster.proxy().send_to(cluster.group(1), elfin::Terminate{});
  // Every entity of the pod is asked to stop although its unregister cannot be answered.
  REQUIRE(eventually([&] { return cluster.host(1).asked() == held; }));
  CHECK(cluster.cache(1).draining());

  cluster.bring_manager_back();
  REQUIRE(eventually([&] {
    const auto map = cluster.assignments();
    return map.pods.size() == 1 && map.shards_of(PodCluster::ref(2)).size() == PodCluster::kShards &&
           cluster.cache(2).owned().size() == PodCluster::kShards;
  }));
}
