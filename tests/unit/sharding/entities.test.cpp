// Sharded entity groups on pods of a real shard manager: an entity starts lazily on the pod that
// owns its shard and nowhere else, a handoff stops it before its shard moves (no cart ever on two
// pods), idle entities passivate, and a stopping pod stops its entities.
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "pod_cluster.hpp"

using elfin::test::CartAdd;
using elfin::test::CartGet;
using elfin::test::eventually;
using elfin::test::PodCluster;

namespace {

void check_no_cart_on_two_pods(PodCluster& cluster) {
  const auto violations = cluster.carts().violations();
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}

double metric(elfin::testing::Proxy& proxy, std::string_view name) {
  double total = 0;
  for (const auto& sample : proxy.system().scrape_metrics()) {
    if (sample.name == name) total += sample.value;
  }
  return total;
}

double retries(elfin::testing::Proxy& proxy) { return metric(proxy, "elfin_sharding_not_owner_retries_total"); }

bool balanced(PodCluster& cluster) {
  return cluster.cache(1).owned().size() == 8 && cluster.cache(2).owned().size() == 8;
}

}  // namespace

TEST_CASE("sharding pods: an entity starts on its first message, once, on the pod owning its shard only",
          "[sharding]") {
  PodCluster cluster(2, "50ms", true, /*carts=*/true);
  REQUIRE(eventually([&] { return balanced(cluster); }));
  for (int i = 0; i < 20; ++i) {
    const std::string id = fmt::format("cart-{}", i);
    const std::size_t owner = cluster.owner_of(id);
    REQUIRE(owner != 0);
    const std::size_t other = 3 - owner;
    for (int n = 0; n < 3; ++n) cluster.proxy().send_to(cluster.carts_of(owner), CartAdd{id, 0});
    auto state = cluster.proxy().request_fallible(CartGet{id}, cluster.carts_of(owner));
    REQUIRE(state);
    CHECK(state->pod == PodCluster::ref(owner).address);
    CHECK(state->items == 3);
    // The pod that does not own the shard refuses the message: nothing starts there.
    CHECK_FALSE(cluster.proxy().try_send_to(cluster.carts_of(other), CartAdd{id, 0}));
    CHECK_FALSE(cluster.proxy().request_fallible(CartGet{id}, cluster.carts_of(other)));
    // The owner token names the pod and the epoch its shard was assigned at.
    const auto token = cluster.registry(owner).token(id);
    REQUIRE(token);
    CHECK(token.value().pod == PodCluster::ref(owner));
    CHECK(token.value().epoch > 0);
    CHECK_FALSE(cluster.registry(other).token(id));
  }
  CHECK(cluster.carts().starts() == 20);
  CHECK(cluster.registry(1).size() + cluster.registry(2).size() == 20);
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE("sharding pods: a stopping pod stops its entities before its shards move, and they restart elsewhere",
          "[sharding]") {
  PodCluster cluster(2, "1h", true, /*carts=*/true);
  REQUIRE(eventually(
      [&] { return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards; }));
  const std::size_t holder = cluster.cache(1).owned().size() == PodCluster::kShards ? 1 : 2;
  const std::size_t other = 3 - holder;
  for (int i = 0; i < 30; ++i) cluster.proxy().send_to(cluster.carts_of(holder), CartAdd{fmt::format("cart-{}", i), 0});
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(holder).address) == 30; }));

  cluster.proxy().send_to(cluster.group(holder), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.cache(other).owned().size() == PodCluster::kShards; }));
  // Every cart stopped on the old pod before the new pod got any shard.
  CHECK(cluster.carts().running_on(PodCluster::ref(holder).address) == 0);
  CHECK(cluster.registry(holder).size() == 0);
  for (int i = 0; i < 30; ++i) {
    const std::string id = fmt::format("cart-{}", i);
    cluster.proxy().send_to(cluster.carts_of(other), CartAdd{id, 0});
    auto state = cluster.proxy().request_fallible(CartGet{id}, cluster.carts_of(other));
    REQUIRE(state);
    CHECK(state->pod == PodCluster::ref(other).address);
    CHECK(state->items == 1);  // a fresh incarnation
  }
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE("sharding pods: entities of unassigned shards stop before the unassign is answered, under traffic",
          "[sharding]") {
  PodCluster cluster(2, "50ms", true, /*carts=*/true);
  // While the shards are being split between the pods, carts get messages through whichever pod
  // owns them at that instant; no cart ever runs on both.
  for (int round = 0; round < 200 && !balanced(cluster); ++round) {
    for (int i = 0; i < 16; ++i) {
      const std::string id = fmt::format("cart-{}", i);
      if (const std::size_t owner = cluster.owner_of(id); owner != 0) {
        std::ignore = cluster.proxy().try_send_to(cluster.carts_of(owner), CartAdd{id, 0});
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{1});  // traffic pacing, not a wait for a condition
  }
  REQUIRE(eventually([&] { return balanced(cluster); }));
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE("sharding pods: an idle entity passivates and the next message starts it afresh", "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true, "entity_max_idle_time = \"100ms\"");
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-a", 0});
  cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-a", 0});
  auto before = cluster.proxy().request_fallible(CartGet{"cart-a"}, cluster.carts_of(1));
  REQUIRE(before);
  CHECK(before->items == 2);
  REQUIRE(eventually([&] { return cluster.registry(1).size() == 0; }));
  CHECK(cluster.carts().running_on(PodCluster::ref(1).address) == 0);
  auto after = cluster.proxy().request_fallible(CartGet{"cart-a"}, cluster.carts_of(1));
  REQUIRE(after);
  CHECK(after->items == 0);
  CHECK(cluster.carts().starts() == 2);
  CHECK(metric(cluster.proxy(), "elfin_sharding_entity_starts_total") == 2);
  CHECK(metric(cluster.proxy(), "elfin_sharding_entity_passivations_total") >= 1);
}

TEST_CASE("sharding pods: a request to a cart whose shard is elsewhere is retried until its new owner answers",
          "[sharding]") {
  PodCluster cluster(2, "1h", true, /*carts=*/true);
  REQUIRE(eventually(
      [&] { return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards; }));
  const std::size_t holder = cluster.cache(1).owned().size() == PodCluster::kShards ? 1 : 2;
  const std::size_t other = 3 - holder;
  // Sent to the pod that owns nothing, with nothing changing: a typed timeout after send_timeout.
  const auto refused = cluster.client_get("cart-1", other, std::chrono::milliseconds{300});
  CHECK_FALSE(refused.ok);
  CHECK(refused.attempts > 2);
  CHECK(refused.error.find("within send_timeout") != std::string::npos);

  // The holder stops while the client keeps trying: its shards move to the other pod, which
  // then answers.
  auto side = cluster.proxy().subproxy();
  const double before = retries(side);
  elfin::test::ClientAnswer answer;
  std::thread client([&] { answer = cluster.client_get("cart-1", other, std::chrono::milliseconds{5000}); });
  const bool retried = eventually([&] { return retries(side) >= before + 2; });
  side.send_to(cluster.group(holder), elfin::Terminate{});
  client.join();
  REQUIRE(retried);
  CHECK(answer.ok);
  CHECK(answer.state.pod == PodCluster::ref(other).address);
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE("sharding pods: concurrent first messages start one entity, and one sender's messages arrive in order",
          "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  auto side = cluster.proxy().subproxy();
  constexpr std::uint64_t kEach = 200;
  // Two senders race to be first to a new cart; the test proxy numbers its own messages.
  std::thread other([&] {
    for (std::uint64_t i = 0; i < kEach; ++i) side.send_to(cluster.carts_of(1), CartAdd{"cart-new", 0});
  });
  for (std::uint64_t i = 1; i <= kEach; ++i) cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-new", i});
  other.join();
  auto state = cluster.proxy().request_fallible(CartGet{"cart-new"}, cluster.carts_of(1));
  REQUIRE(state);
  CHECK(state->items == 2 * kEach);
  CHECK(state->in_order);
  CHECK(cluster.carts().starts() == 1);
  CHECK(cluster.registry(1).size() == 1);
}

TEST_CASE("sharding pods: each message restarts an entity's idle clock, so a busy entity is never passivated",
          "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true, "entity_max_idle_time = \"400ms\"");
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  // A message every 25 ms for 1 s: 2.5 idle times in all, but never 400 ms without a message.
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) {
    cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-busy", 0});
    std::this_thread::sleep_for(std::chrono::milliseconds{25});  // traffic pacing, not a wait for a condition
  }
  auto state = cluster.proxy().request_fallible(CartGet{"cart-busy"}, cluster.carts_of(1));
  REQUIRE(state);
  CHECK(state->items == kMessages);  // one incarnation took them all
  CHECK(cluster.carts().starts() == 1);
  // Left alone, it passivates.
  REQUIRE(eventually([&] { return cluster.registry(1).size() == 0; }));
  CHECK(metric(cluster.proxy(), "elfin_sharding_entity_passivations_total") >= 1);
}
