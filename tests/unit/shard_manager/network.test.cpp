// The manager and a pod on two nodes over real loopback TCP: everything the protocol carries —
// Register with the pod's endpoint on another node, PingPod, AssignShards, AssignmentsChanged,
// typed answers — crosses the network battery, and a pod whose node goes away is found dead.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "../network/network_test_config.hpp"
#include "../temp_dir.hpp"
#include "fake_pods.hpp"

using namespace std::chrono_literals;
using elfin::network::test::network_config;
using elfin::test::eventually;

namespace {

std::string listen_address(elfin::testing::Proxy& proxy) {
  auto info = proxy.request_fallible(elfin::network::GetNetworkInfo{}, proxy.system().group_addr("system.network"));
  if (!info || info->listening.empty()) throw std::runtime_error("the node listens nowhere");
  return info->listening.front();
}

}  // namespace

TEST_CASE("shard manager: a pod on another node registers, is pinged, assigned and notified over the network",
          "[shard_manager]") {
  elfin::test::TempDir dir;
  auto world = std::make_shared<elfin::test::World>();

  // Node 2: the manager.
  elfin::Topology manager_topology;
  manager_topology.local("system.network").mount(elfin::network::blueprint());
  elfin::actors::shard_manager::Options options;
  // The real file, told to the World so it can check that nothing is assigned before it is saved.
  options.storage = [world](const elfin::actors::shard_manager::Config& config)
      -> elfin::Result<std::unique_ptr<elfin::actors::shard_manager::AssignmentStorage>, std::string> {
    return std::unique_ptr<elfin::actors::shard_manager::AssignmentStorage>(std::make_unique<elfin::test::FlakyStorage>(
        config.storage.path, std::make_shared<elfin::test::FlakyStorage::Control>(), world));
  };
  manager_topology.local("sharding.manager").mount(elfin::actors::shard_manager::blueprint(std::move(options)));
  elfin::StartOptions manager_start;
  manager_start.node_no = 2;
  manager_start.config_toml = network_config("127.0.0.1:0", {}) + fmt::format(R"(
[sharding.manager]
shard_function = "jump-xxh64/1:16"
rebalance_interval = "1h"
storage.path = "{}"
)",
                                                                              dir.file("shards.state"));
  elfin::testing::ProxyOptions manager_options;
  manager_options.node_no = 2;
  auto manager =
      elfin::testing::proxy(std::move(manager_topology), "sharding.manager", std::move(manager_start), manager_options);

  // Node 1: a pod, and the manager as a remote group.
  auto pod_node = std::make_unique<elfin::testing::Proxy>([&] {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    topology.local("pods").mount(elfin::test::fake_pods(world));
    topology.local("sharding.manager").mount(elfin::network::remote_group({.nodes = {2}}));
    elfin::StartOptions start;
    start.node_no = 1;
    start.config_toml = network_config("127.0.0.1:0", {listen_address(manager)});
    elfin::testing::ProxyOptions options;
    options.node_no = 1;
    return elfin::testing::proxy(std::move(topology), "sharding.manager", std::move(start), options);
  }());
  auto& pod = *pod_node;
  REQUIRE(eventually([&] { return pod.request_fallible(elfin::protocols::sharding::GetAssignments{}).ok(); }));

  const elfin::protocols::sharding::PodRef me{"node-1:54321", 77};
  auto endpoint = pod.request_fallible(elfin::test::StartPod{1, me}, pod.system().group_addr("pods"));
  REQUIRE(endpoint);
  CHECK(elfin::Addr{*endpoint}.node_no() == 1);

  // A wrong shard function is refused across the network, as a typed answer.
  auto refused = pod.request(elfin::protocols::sharding::Register{me, *endpoint, "1.0.0", "shardcake/1:300"});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == elfin::protocols::sharding::ShardingErrorKind::ShardFunctionMismatch);

  auto registered = pod.request(elfin::protocols::sharding::Register{me, *endpoint, "1.0.0", "jump-xxh64/1:16"});
  REQUIRE(registered);
  REQUIRE(eventually([&] { return world->held_by(me).size() == 16; }));
  REQUIRE(eventually([&] { return world->notified_epoch(me) >= 1; }));
  const auto map = pod.request(elfin::protocols::sharding::GetAssignments{});
  CHECK(map.shards_of(me).size() == 16);
  CHECK(world->violations().empty());

  // The pod's node goes away: a report makes the manager ping it, the ping finds no route, and
  // the pod is removed with its shards.
  pod_node.reset();
  manager.send(elfin::protocols::sharding::ReportUnhealthyPod{me, {"someone:1", 1}});
  REQUIRE(eventually([&] { return manager.request(elfin::protocols::sharding::GetAssignments{}).pods.empty(); }));
  const auto after = manager.request(elfin::protocols::sharding::GetAssignments{});
  CHECK(after.shards_of(me).empty());
  CHECK(after.epoch > map.epoch);
}
