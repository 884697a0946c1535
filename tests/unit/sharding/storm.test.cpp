// A register/unregister storm under traffic (the sharding study's §4.3 item 26): pod nodes join,
// stop gracefully and are killed, between two and five of them, while a client asks every cart
// without pause (the study asks for 1 to 10 hosts over 5 minutes; scaled down for CI). After every change the cluster
// settles with each shard owned by exactly one live pod, the manager's map naming the same pods and every pod at its
// epoch (I1, I2), loads within one shard (I3); no cart ever runs on two pods (I5, checked at every start); and at the
// end every cart answers.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "pod_nodes.hpp"

using elfin::test::eventually;
using elfin::test::PodNodes;

namespace {

constexpr std::size_t kShards = 16;

/// Every shard owned by exactly one of `live`, none by another, the manager's map listing exactly
/// `live` at the epoch every live pod holds, and loads within one of each other. Empty: settled.
std::string unsettled(PodNodes& nodes, elfin::testing::Proxy& manager_side, const std::set<std::size_t>& live) {
  auto map = manager_side.request_fallible(elfin::protocols::sharding::GetAssignments{},
                                           manager_side.system().group_addr("sharding.manager"));
  if (!map) return "the manager did not answer";
  if (map->pods.size() != live.size())
    return fmt::format("the map lists {} pods, {} live", map->pods.size(), live.size());
  std::map<std::uint32_t, int> owners;
  std::size_t lowest = kShards;
  std::size_t highest = 0;
  for (auto i : live) {
    auto& cache = *nodes.node(i).cache;
    if (cache.map_epoch() != map->epoch)
      return fmt::format("pod-{} at epoch {}, map {}", i, cache.map_epoch(), map->epoch);
    const auto owned = cache.owned();
    if (map->shards_of(cache.self()).size() != owned.size()) return fmt::format("pod-{} disagrees with the map", i);
    for (auto shard : owned) ++owners[shard];
    lowest = std::min(lowest, owned.size());
    highest = std::max(highest, owned.size());
  }
  if (owners.size() != kShards) return fmt::format("{} of {} shards owned", owners.size(), kShards);
  for (const auto& [shard, n] : owners) {
    if (n != 1) return fmt::format("shard {} owned by {} pods", shard, n);
  }
  if (highest - lowest > 1) return fmt::format("loads from {} to {}", lowest, highest);
  return {};
}

}  // namespace

TEST_CASE("sharding pods: a join, leave and kill storm under traffic keeps one owner per shard and per cart",
          "[sharding]") {
  PodNodes nodes(2);
  REQUIRE(nodes.settled());
  std::vector<std::string> carts;
  for (int i = 0; i < 24; ++i) carts.push_back(fmt::format("cart-{}", i));
  auto world = nodes.world();
  auto side = nodes.proxy(1).subproxy();  // the test's; the node's own proxy runs the traffic
  nodes.proxy(1).set_timeout(std::chrono::seconds{120});
  const elfin::Addr front = nodes.proxy(1).system().group_addr("carts");
  std::optional<elfin::test::TrafficReport> report;
  // Taken here: the deque of nodes grows while the traffic runs (its elements stay put).
  elfin::testing::Proxy& traffic_proxy = nodes.proxy(1);
  std::thread traffic([&] {
    auto answer = traffic_proxy.request_fallible(elfin::test::RunTraffic{carts, front.raw(), 3000});
    if (answer) report = std::move(answer).value();
  });

  // Node 1 runs the manager and stays; the others come and go.
  std::set<std::size_t> live{1, 2};
  std::mt19937 random(20261126);
  std::vector<std::string> steps;
  bool settled_every_time = true;
  // Joins (J), graceful stops (S) and kills (K), live pods between two and five; which pod
  // leaves is drawn at random.
  const std::string script = "JJSJKJJSKKJSJK";
  for (std::size_t step = 0; step < script.size() && settled_every_time; ++step) {
    const char action = script[step];
    std::vector<std::size_t> others(std::next(live.begin()), live.end());
    if (action == 'J') {
      const auto added = nodes.add_node();
      live.insert(added);
      steps.push_back(fmt::format("join pod-{}", added));
    } else {
      const auto leaving = others[random() % others.size()];
      live.erase(leaving);
      if (action == 'S') {
        // Gracefully: its entities stop, it unregisters, then its node ends.
        nodes.proxy(leaving).send_to(nodes.proxy(leaving).system().group_addr("sharding.pod"), elfin::Terminate{});
        const bool left = eventually([&] { return nodes.node(1).cache->pods().size() == live.size(); });
        steps.push_back(fmt::format("stop pod-{}{}", leaving, left ? "" : " (not unregistered)"));
        nodes.node(leaving).proxy.reset();
      } else {
        nodes.kill(leaving);  // no unregister: the senders report it, the manager finds it dead
        steps.push_back(fmt::format("kill pod-{}", leaving));
      }
    }
    std::string why;
    settled_every_time = eventually(
        [&] {
          why = unsettled(nodes, side, live);
          return why.empty();
        },
        std::chrono::seconds{20});
    if (!settled_every_time) steps.push_back("not settled: " + why);
    const auto violations = world->violations();
    for (const auto& v : violations) steps.push_back(v);
    if (!violations.empty()) break;
  }
  // Every cart answers once the storm is over.
  const auto served_before = world->served_count();
  const bool flowing = eventually([&] { return world->served_count() >= served_before + 2 * carts.size(); });
  nodes.node(1).stop->store(true);
  traffic.join();
  for (const auto& s : steps) UNSCOPED_INFO(s);
  REQUIRE(settled_every_time);
  CHECK(world->violations().empty());
  CHECK(flowing);
  REQUIRE(report);
  CHECK(report->ok > 0);
  for (const auto& cart : carts) {
    elfin::test::ClientGet ask{cart, front.raw(), nodes.node(1).cache->endpoint(), 3000, -1, "", false};
    auto answer = side.request_fallible(ask, side.system().group_addr("client"));
    REQUIRE(answer);
    INFO(cart << ": " << answer->error);
    CHECK(answer->ok);
  }
}
