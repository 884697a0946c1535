// request_entity's ends: an owner that holds the request gives Unanswered at send_timeout, a
// message no entity is for (an unknown entity type) is refused at once, and requests sent without
// pause through a handoff are each served exactly once — by the old owner before its entities
// stopped, or by the new one — none lost, none twice.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "pod_cluster.hpp"
#include "pod_nodes.hpp"

using elfin::actors::sharding::EntitySendErrorKind;
using elfin::test::ClientAnswer;
using elfin::test::ClientGet;
using elfin::test::eventually;
using elfin::test::PodCluster;
using elfin::test::PodNodes;

namespace {

constexpr auto kind_of(EntitySendErrorKind kind) { return static_cast<std::int32_t>(kind); }

}  // namespace

TEST_CASE("sharding pods: a request its owner holds without answering ends with Unanswered at send_timeout",
          "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  // The owner takes the request (its cart runs) and keeps it: a retry would not help, and waiting
  // on would never end.
  const ClientAnswer answer = cluster.client_get("silent-1", 1, std::chrono::milliseconds{300});
  CHECK_FALSE(answer.ok);
  CHECK(answer.kind == kind_of(EntitySendErrorKind::Unanswered));
  CHECK(answer.attempts == 1);
  INFO(answer.error);
  CHECK(answer.error.find("did not answer within send_timeout") != std::string::npos);
  CHECK(cluster.registry(1).token("silent-1"));
}

TEST_CASE("sharding pods: a request no entity of the group is for is refused at once, not retried", "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  // CartUnknown is not a cart message (cart_id gives no id): an unknown entity type.
  cluster.proxy().set_timeout(std::chrono::seconds{20});
  ClientGet ask{"cart-1", cluster.carts_of(1).raw(), cluster.cache(1).endpoint(), 5000, -1, "", true};
  auto answer = cluster.proxy().request_fallible(ask, cluster.proxy().system().group_addr("client"));
  REQUIRE(answer);
  CHECK_FALSE(answer->ok);
  CHECK(answer->kind == kind_of(EntitySendErrorKind::Refused));
  CHECK(answer->attempts == 1);
  CHECK(cluster.registry(1).size() == 0);  // no entity started for it
  // An entity message to the same group still works.
  const ClientAnswer get = cluster.client_get("cart-1", 1, std::chrono::milliseconds{2000});
  CHECK(get.ok);
}

TEST_CASE("sharding pods: requests sent through a handoff are each served exactly once, by the old or the new owner",
          "[sharding]") {
  PodNodes nodes(2);
  REQUIRE(nodes.settled());
  auto function = elfin::hashing::ShardFunction::parse(elfin::test::kPodNodesFunction).value();
  // Four carts on each pod; pod-2 stops gracefully while the client sends to all of them.
  std::vector<std::string> carts;
  std::vector<std::string> moving;
  int on_one = 0;
  for (int i = 0; on_one < 4 || moving.size() < 4; ++i) {
    const std::string id = fmt::format("cart-{}", i);
    const auto shard = function.shard_of(id).value();
    if (nodes.node(2).cache->owns(shard) && moving.size() < 4) {
      moving.push_back(id);
      carts.push_back(id);
    } else if (nodes.node(1).cache->owns(shard) && on_one < 4) {
      ++on_one;
      carts.push_back(id);
    }
  }
  auto world = nodes.world();
  nodes.proxy(1).set_timeout(std::chrono::seconds{60});
  const elfin::Addr front = nodes.proxy(1).system().group_addr("carts");
  std::optional<elfin::test::TrafficReport> report;
  std::thread traffic([&] {
    auto answer = nodes.proxy(1).request_fallible(elfin::test::RunTraffic{carts, front.raw(), 5000});
    if (answer) report = std::move(answer).value();
  });
  const bool flowing = eventually([&] { return world->served_count() >= 100; });
  nodes.proxy(2).send_to(nodes.proxy(2).system().group_addr("sharding.pod"), elfin::Terminate{});
  const bool moved = eventually([&] { return nodes.node(1).cache->owned().size() == 16; });
  const std::size_t after = world->served_count();
  const bool flowing_after = eventually([&] { return world->served_count() >= after + 100; });
  nodes.node(1).stop->store(true);
  traffic.join();
  REQUIRE(flowing);
  REQUIRE(moved);
  REQUIRE(flowing_after);
  REQUIRE(report);
  for (const auto& e : report->errors) UNSCOPED_INFO(e);
  CHECK(report->errors.empty());
  CHECK(report->ok == report->sent);

  // Every request was served once, none lost, none twice.
  const auto served = world->served();
  std::map<std::uint64_t, int> times;
  for (const auto& s : served) ++times[s.seq];
  CHECK(times.size() == report->sent);
  std::uint64_t twice = 0;
  for (const auto& [seq, n] : times) twice += n > 1 ? 1 : 0;
  CHECK(twice == 0);
  CHECK(times.begin()->first == 1);
  CHECK(times.rbegin()->first == report->sent);

  // A moving cart was served by pod-2, then by pod-1 and never again by pod-2; its owner token's
  // epoch only grows. Order of service follows the sender's order (one request at a time).
  for (const auto& id : moving) {
    std::vector<elfin::test::Served> of_cart;
    for (const auto& s : served) {
      if (s.cart == id) of_cart.push_back(s);
    }
    REQUIRE_FALSE(of_cart.empty());
    CHECK(of_cart.front().pod == "pod-2");
    CHECK(of_cart.back().pod == "pod-1");
    std::size_t switches = 0;
    for (std::size_t i = 1; i < of_cart.size(); ++i) {
      CHECK(of_cart[i].seq > of_cart[i - 1].seq);
      CHECK(of_cart[i].epoch >= of_cart[i - 1].epoch);
      if (of_cart[i].pod != of_cart[i - 1].pod) ++switches;
    }
    CHECK(switches == 1);
  }
  const auto violations = world->violations();
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}
