// Entity messages reach the owner's node: two nodes over real loopback TCP, a shard manager and a
// pod on node 1, a pod on node 2, each node fronting its cart group with a remote group whose node
// selector is actors::sharding::owner_node. Whichever node a sender is on, a cart's messages land on the
// one pod that owns its shard.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/owner_node.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/testing/proxy.hpp>

#include "../network/network_test_config.hpp"
#include "../temp_dir.hpp"
#include "carts.hpp"
#include "pod_cluster.hpp"

using elfin::network::test::network_config;
using elfin::test::CartAdd;
using elfin::test::CartGet;
using elfin::test::eventually;

namespace {

constexpr const char* kFunction = "jump-xxh64/1:16";

std::string listen_address(elfin::testing::Proxy& proxy) {
  auto info = proxy.request_fallible(elfin::network::GetNetworkInfo{}, proxy.system().group_addr("system.network"));
  if (!info || info->listening.empty()) throw std::runtime_error("the node listens nowhere");
  return info->listening.front();
}

struct PodNode {
  std::shared_ptr<elfin::actors::sharding::AssignmentCache> cache =
      std::make_shared<elfin::actors::sharding::AssignmentCache>();
  std::shared_ptr<elfin::actors::sharding::EntityRegistry> registry =
      std::make_shared<elfin::actors::sharding::EntityRegistry>();
};

/// The groups every pod node has: its pod, its carts, and `carts` in front of all pod nodes.
void mount_pod(elfin::Topology& topology, elfin::Local& manager, PodNode& node, std::uint64_t incarnation,
               std::shared_ptr<elfin::test::CartWorld> world, std::string address) {
  auto pod = topology.local("sharding.pod");
  pod.mount(elfin::actors::sharding::pod({node.cache, incarnation}));
  pod.route_to(manager, elfin::filters::protocol("sharding"));
  elfin::actors::sharding::EntityOptions options;
  options.cache = node.cache;
  options.shard_function = kFunction;
  options.entity_id = elfin::test::cart_id;
  options.registry = node.registry;
  topology.local("carts.local")
      .mount(elfin::actors::sharding::entities(std::move(options),
                                               [world, address](elfin::Context<elfin::NoConfig, std::string> ctx) {
                                                 return elfin::test::cart(ctx, world, address);
                                               }));
  elfin::network::RemoteGroupOptions front;
  front.nodes = {1, 2};
  front.remote_name = "carts.local";
  front.pick = elfin::actors::sharding::owner_node(node.cache, kFunction, elfin::test::cart_id);
  topology.local("carts").mount(elfin::network::remote_group(std::move(front)));
}

std::string pod_config(std::string_view address) {
  return fmt::format(R"(
[sharding.pod]
address = "{}"
shard_function = "{}"
retry_interval = "50ms"
refresh_interval = "50ms"
)",
                     address, kFunction);
}

/// Node 1: the manager and pod-1; node 2: pod-2 (which may be shut down).
struct TwoNodes {
  explicit TwoNodes(std::string_view health_check_interval = "1m") {
    elfin::Topology topology1;
    topology1.local("system.network").mount(elfin::network::blueprint());
    auto manager1 = topology1.local("sharding.manager");
    manager1.mount(elfin::actors::shard_manager::blueprint());
    mount_pod(topology1, manager1, one, 11, world, "pod-1");
    elfin::StartOptions start1;
    start1.node_no = 1;
    start1.config_toml = network_config("127.0.0.1:0", {}) +
                         fmt::format(R"(
[sharding.manager]
shard_function = "{}"
rebalance_interval = "50ms"
rebalance_rate = 1.0
ping_timeout = "300ms"
health_check_interval = "{}"
storage.path = "{}"
)",
                                     kFunction, health_check_interval, dir.file("shards.state")) +
                         pod_config("pod-1");
    elfin::testing::ProxyOptions options1;
    options1.node_no = 1;
    node1 = std::make_unique<elfin::testing::Proxy>(
        elfin::testing::proxy(std::move(topology1), "carts", std::move(start1), options1));

    elfin::Topology topology2;
    topology2.local("system.network").mount(elfin::network::blueprint());
    auto manager2 = topology2.local("sharding.manager");
    manager2.mount(elfin::network::remote_group({.nodes = {1}}));
    mount_pod(topology2, manager2, two, 22, world, "pod-2");
    elfin::StartOptions start2;
    start2.node_no = 2;
    start2.config_toml = network_config("127.0.0.1:0", {listen_address(*node1)}) + pod_config("pod-2");
    elfin::testing::ProxyOptions options2;
    options2.node_no = 2;
    node2 = std::make_unique<elfin::testing::Proxy>(
        elfin::testing::proxy(std::move(topology2), "carts", std::move(start2), options2));
  }

  /// Both pods hold half the shards and know the whole map.
  bool settled() {
    if (!eventually([&] { return one.cache->owned().size() == 8 && two.cache->owned().size() == 8; })) return false;
    return eventually([&] {
      auto map = node1->request_fallible(elfin::protocols::sharding::GetAssignments{},
                                         node1->system().group_addr("sharding.manager"));
      return map && one.cache->map_epoch() == map->epoch && two.cache->map_epoch() == map->epoch;
    });
  }

  elfin::test::TempDir dir;
  std::shared_ptr<elfin::test::CartWorld> world = std::make_shared<elfin::test::CartWorld>();
  PodNode one;
  PodNode two;
  std::unique_ptr<elfin::testing::Proxy> node1;
  std::unique_ptr<elfin::testing::Proxy> node2;
};

}  // namespace

TEST_CASE("sharding pods: a cart's messages reach the pod owning its shard from any node", "[sharding]") {
  TwoNodes nodes;
  REQUIRE(nodes.settled());
  auto& node1 = *nodes.node1;
  auto& node2 = *nodes.node2;
  auto function = elfin::hashing::ShardFunction::parse(kFunction).value();
  for (int i = 0; i < 20; ++i) {
    const std::string id = fmt::format("cart-{}", i);
    const auto shard = function.shard_of(id).value();
    const std::string owner = nodes.one.cache->owns(shard) ? "pod-1" : "pod-2";
    node2.send(CartAdd{id, 0});
    node1.send(CartAdd{id, 0});
    // Both adds went to the same cart, whichever node they were sent from.
    REQUIRE(eventually([&] {
      auto state = node1.request_fallible(CartGet{id});
      return state && state->items == 2;
    }));
    auto state = node2.request_fallible(CartGet{id});
    REQUIRE(state);
    CHECK(state->pod == owner);
    CHECK(state->items == 2);
  }
  CHECK(nodes.one.registry->size() + nodes.two.registry->size() == 20);
  CHECK(nodes.world->starts() == 20);
  CHECK(nodes.world->violations().empty());
}

TEST_CASE("sharding pods: a sender that cannot reach a shard's owner reports it, and the manager moves its shards",
          "[sharding]") {
  // No periodic health check: only the report can make the manager look at pod-2.
  TwoNodes nodes("1h");
  REQUIRE(nodes.settled());
  auto function = elfin::hashing::ShardFunction::parse(kFunction).value();
  std::string lost;
  for (int i = 0; lost.empty(); ++i) {
    const std::string id = fmt::format("cart-{}", i);
    if (nodes.two.cache->owns(function.shard_of(id).value())) lost = id;
  }
  nodes.node2.reset();  // pod-2's node goes away without unregistering
  // Refused while the owner is unreachable, which pod-1 reports; the manager's ping then finds
  // pod-2 gone, and pod-1 gets its shards.
  REQUIRE(eventually([&] {
    std::ignore = nodes.node1->try_send(CartAdd{lost, 0});
    return nodes.one.cache->owned().size() == 16;
  }));
  auto state = nodes.node1->request_fallible(CartGet{lost});
  REQUIRE(state);
  CHECK(state->pod == "pod-1");
  CHECK(nodes.world->violations().empty());
}
