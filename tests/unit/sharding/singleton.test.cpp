// Cluster singletons on pods of a real shard manager: the instance runs, unasked, on the pod that
// owns the shard of its name and nowhere else, and when the shard moves it is stopped on the old
// owner before it starts on the new one (owner tokens and a world that sees every start and stop).
#include <string>

#include <catch2/catch.hpp>

#include "pod_cluster.hpp"

using elfin::test::eventually;
using elfin::test::PodCluster;

namespace {

std::size_t singleton_owner(PodCluster& cluster, std::size_t pods) {
  const auto shard = elfin::hashing::ShardFunction::parse(fmt::format("jump-xxh64/1:{}", PodCluster::kShards))
                         .value()
                         .shard_of("scheduler")
                         .value();
  for (std::size_t i = 1; i <= pods; ++i) {
    if (cluster.cache(i).owns(shard)) return i;
  }
  return 0;
}

}  // namespace

TEST_CASE("sharding pods: a singleton starts unasked on the pod owning its shard, and only there", "[sharding]") {
  PodCluster cluster(2, "50ms", true, /*carts=*/false, "", /*singletons=*/true);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == 8 && cluster.cache(2).owned().size() == 8; }));
  const std::size_t owner = singleton_owner(cluster, 2);
  REQUIRE(owner != 0);
  const std::size_t other = 3 - owner;
  // Nobody sent it anything: the assign of its shard started it.
  REQUIRE(eventually([&] { return cluster.singleton_registry(owner).size() == 1; }));
  CHECK(cluster.singleton_registry(other).size() == 0);
  const auto token = cluster.singleton_registry(owner).token("scheduler");
  REQUIRE(token);
  CHECK(token->pod == PodCluster::ref(owner));
  CHECK(token->epoch > 0);
  // The registry entry is made before the singleton's actor records its start.
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(owner).address) == 1; }));
  CHECK(cluster.carts().running_on(PodCluster::ref(other).address) == 0);
  const auto violations = cluster.carts().violations();
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}

TEST_CASE("sharding pods: a singleton whose pod stops is stopped there before it starts on the new owner",
          "[sharding]") {
  PodCluster cluster(2, "1h", true, /*carts=*/false, "", /*singletons=*/true);
  REQUIRE(eventually(
      [&] { return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards; }));
  const std::size_t holder = cluster.cache(1).owned().size() == PodCluster::kShards ? 1 : 2;
  const std::size_t other = 3 - holder;
  // The registry entry is made before the singleton's actor records its start: wait for both.
  REQUIRE(eventually([&] { return cluster.singleton_registry(holder).size() == 1; }));
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(holder).address) == 1; }));
  CHECK(cluster.singleton_registry(other).size() == 0);

  cluster.proxy().send_to(cluster.group(holder), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.cache(other).owned().size() == PodCluster::kShards; }));
  // Running again after the move, on the new owner, with the new owner's token.
  REQUIRE(eventually([&] { return cluster.singleton_registry(other).size() == 1; }));
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(other).address) == 1; }));
  CHECK(cluster.singleton_registry(holder).size() == 0);
  const auto token = cluster.singleton_registry(other).token("scheduler");
  REQUIRE(token);
  CHECK(token->pod == PodCluster::ref(other));
  CHECK(cluster.carts().running_on(PodCluster::ref(holder).address) == 0);
  CHECK(cluster.carts().running_on(PodCluster::ref(other).address) == 1);
  // Never two at once: the old instance's stop came before the new one's start.
  const auto events = cluster.carts().events();
  REQUIRE(events.size() == 3);
  CHECK(events[0] == fmt::format("start scheduler {}", PodCluster::ref(holder).address));
  CHECK(events[1] == fmt::format("stop scheduler {}", PodCluster::ref(holder).address));
  CHECK(events[2] == fmt::format("start scheduler {}", PodCluster::ref(other).address));
  const auto violations = cluster.carts().violations();
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}
