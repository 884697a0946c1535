// The pod side of sharding against a real shard manager: registration with address and
// incarnation, the manager's commands and their epochs, handoff only after the entities stopped,
// serving nothing before a map is held, working from the cache while the manager is away, and the
// graceful stop.
#include <cstdint>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/actors/sharding.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>

#include "pod_cluster.hpp"

using elfin::protocols::sharding::ShardingErrorKind;
using elfin::test::eventually;
using elfin::test::PodCluster;

TEST_CASE("sharding pods: a pod reads the map, registers with its address and incarnation, and takes every shard",
          "[sharding]") {
  PodCluster cluster(1);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const auto map = cluster.assignments();
  REQUIRE(map.pods.size() == 1);
  CHECK(map.pods[0].pod == PodCluster::ref(1));
  CHECK(map.pods[0].endpoint == cluster.cache(1).endpoint());
  CHECK(map.pods[0].version == "1.0.0");
  CHECK(cluster.cache(1).ready());
  for (std::uint32_t shard = 0; shard < PodCluster::kShards; ++shard) {
    CHECK(cluster.cache(1).route(shard).local);
  }
  // The pod answers the manager's ping with who it is.
  auto pong = cluster.proxy().request_fallible(elfin::protocols::sharding::PingPod{PodCluster::ref(1)},
                                               elfin::Addr{cluster.cache(1).endpoint()});
  REQUIRE(pong);
  CHECK(*pong == PodCluster::ref(1));
}

TEST_CASE("sharding pods: commands for another incarnation or an older epoch are refused, repeats are idempotent",
          "[sharding]") {
  PodCluster cluster(1);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const elfin::Addr endpoint{cluster.cache(1).endpoint()};
  const auto me = PodCluster::ref(1);
  const std::uint64_t epoch = cluster.cache(1).epoch();

  auto other = me;
  other.incarnation += 1;
  auto wrong =
      cluster.proxy().request_fallible(elfin::protocols::sharding::AssignShards{other, {0}, epoch + 1}, endpoint);
  REQUIRE(wrong);
  REQUIRE_FALSE(*wrong);
  CHECK(wrong->error().kind == ShardingErrorKind::WrongIncarnation);

  auto stale =
      cluster.proxy().request_fallible(elfin::protocols::sharding::UnassignShards{me, {0}, epoch - 1}, endpoint);
  REQUIRE(stale);
  REQUIRE_FALSE(*stale);
  CHECK(stale->error().kind == ShardingErrorKind::StaleEpoch);
  CHECK(cluster.cache(1).owns(0));

  // The manager may resend shards the pod holds (after its restart): nothing changes.
  auto again = cluster.proxy().request_fallible(elfin::protocols::sharding::AssignShards{me, {0, 1}, epoch}, endpoint);
  REQUIRE(again);
  CHECK(*again);
  CHECK(cluster.cache(1).owned().size() == PodCluster::kShards);
}

TEST_CASE("sharding pods: an unassign is acknowledged only after the shards' entities stopped", "[sharding]") {
  PodCluster cluster(2);
  // Pod 1 registers alone first and takes everything; its entities will stop only when told.
  REQUIRE(eventually(
      [&] { return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards; }));
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == 8 && cluster.cache(2).owned().size() == 8; }));
  // Balanced; now pod 2's entities hold on when asked to stop, and pod 2 leaves.
  cluster.host(2).set_prompt(false);
  cluster.host(2).clear();
  cluster.proxy().send_to(cluster.group(2), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.host(2).asked().size() == 8; }));
  // Asked to stop but not stopped: pod 2 routes nothing locally, has not unregistered, and the
  // manager gave its shards to nobody.
  CHECK(cluster.cache(2).owned().empty());
  CHECK(cluster.cache(2).draining());
  CHECK(cluster.assignments().pods.size() == 2);
  CHECK(cluster.cache(1).owned().size() == 8);
  for (auto shard : cluster.host(2).asked()) CHECK_FALSE(cluster.cache(1).owns(shard));

  cluster.host(2).release();
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const auto map = cluster.assignments();
  REQUIRE(map.pods.size() == 1);
  CHECK(map.pods[0].pod == PodCluster::ref(1));
}

TEST_CASE("sharding pods: shards move between pods only through unassign, then assign", "[sharding]") {
  PodCluster cluster(2);
  // Every shard pod 2 ever gets was first taken from pod 1 and its entities stopped there.
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == 8 && cluster.cache(2).owned().size() == 8; }));
  // The first register gave one pod every shard; the other got its half from it.
  const std::size_t first = cluster.host(1).asked().empty() ? 2 : 1;
  const std::size_t second = 3 - first;
  CHECK(cluster.host(second).asked().empty());
  const std::set<std::uint32_t> moved = cluster.host(first).asked();
  CHECK(moved.size() == 8);
  for (auto shard : cluster.cache(second).owned()) {
    CHECK(moved.contains(shard));
    CHECK_FALSE(cluster.cache(first).owns(shard));
  }
  CHECK(cluster.owned_in_map(1) == 8);
  CHECK(cluster.owned_in_map(2) == 8);
}

TEST_CASE("sharding pods: a graceful stop drains the pod, unregisters, and its shards move at once", "[sharding]") {
  PodCluster cluster(2, "1h");
  // With no regular rounds, only the first register places shards: pod 1 or pod 2 takes all.
  REQUIRE(eventually([&] { return cluster.assignments().pods.size() == 2; }));
  REQUIRE(eventually(
      [&] { return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards; }));
  const std::size_t holder = cluster.cache(1).owned().size() == PodCluster::kShards ? 1 : 2;
  const std::size_t other = 3 - holder;
  cluster.proxy().send_to(cluster.group(holder), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.cache(other).owned().size() == PodCluster::kShards; }));
  CHECK(cluster.host(holder).asked().size() == PodCluster::kShards);
  CHECK(cluster.cache(holder).draining());
  CHECK(cluster.cache(holder).owned().empty());
  const auto map = cluster.assignments();
  REQUIRE(map.pods.size() == 1);
  CHECK(map.pods[0].pod == PodCluster::ref(other));
  // A draining pod takes nothing.
  auto refused = cluster.cache(holder).assign(PodCluster::ref(holder), {0}, map.epoch + 1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ShardingErrorKind::Draining);
}

TEST_CASE("sharding pods: a pod serves nothing before it holds a map", "[sharding]") {
  PodCluster cluster(1, "50ms", /*with_manager=*/false);
  // The manager never answers; the pod keeps trying and routes nothing meanwhile.
  REQUIRE(eventually([&] { return cluster.cache(1).endpoint() != 0; }));
  CHECK_FALSE(cluster.cache(1).ready());
  const auto route = cluster.cache(1).route(3);
  CHECK_FALSE(route.local);
  CHECK_FALSE(route.owner);
}

TEST_CASE("sharding pods: with the manager gone the pods keep routing from their cache", "[sharding]") {
  PodCluster cluster(2);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == 8 && cluster.cache(2).owned().size() == 8; }));
  REQUIRE(eventually([&] { return cluster.cache(1).map_epoch() == cluster.cache(2).map_epoch(); }));
  const auto map = cluster.assignments();
  REQUIRE(eventually([&] { return cluster.cache(1).map_epoch() == map.epoch; }));

  cluster.take_manager_down();
  // A command newer than the map makes a pod fetch the map, which fails now: it keeps its cache.
  const elfin::Addr endpoint{cluster.cache(1).endpoint()};
  const auto owned = cluster.cache(1).owned();
  REQUIRE(cluster.proxy().request_fallible(
      elfin::protocols::sharding::AssignShards{PodCluster::ref(1), {owned.front()}, map.epoch + 1}, endpoint));
  REQUIRE(eventually([&] { return cluster.cache(1).epoch() == map.epoch + 1; }));

  // Each pod still knows where every shard is: its own locally, the other's through the map.
  for (std::uint32_t shard = 0; shard < PodCluster::kShards; ++shard) {
    const auto one = cluster.cache(1).route(shard);
    const auto two = cluster.cache(2).route(shard);
    CHECK(one.local != two.local);
    if (one.local) {
      REQUIRE(two.owner);
      CHECK(two.owner.value().pod == PodCluster::ref(1));
    } else {
      REQUIRE(one.owner);
      CHECK(one.owner.value().pod == PodCluster::ref(2));
    }
  }
}

TEST_CASE("sharding pods: a config with a bad shard function or durations is refused naming each key", "[sharding]") {
  elfin::actors::sharding::PodConfig config;
  CHECK(elfin::actors::sharding::validate(config).empty());
  config.shard_function = "nonsense";
  config.send_timeout = std::chrono::milliseconds{0};
  config.entity_termination_timeout = std::chrono::milliseconds{-1};
  const auto problems = elfin::actors::sharding::validate(config);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].find("shard_function") != std::string::npos);
  CHECK(problems[1].find("entity_termination_timeout") != std::string::npos);
  CHECK(problems[2].find("send_timeout") != std::string::npos);
}
