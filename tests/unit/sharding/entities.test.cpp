// Sharded entity groups on pods of a real shard manager: an entity starts lazily on the pod that
// owns its shard and nowhere else, a handoff stops it before its shard moves (no cart ever on two
// pods), idle entities passivate, a stopping pod stops its entities, one that ignores the
// termination message is killed at entity_termination_timeout, and what is sent to an entity
// while it stops is held for its next incarnation (here or on the shard's new owner).
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/hashing/shard_function.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>

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
  // Idle long enough that the two adds and the get land in one life of the entity even when the
  // test's thread loses its core for a while; eventually() below waits for the passivation.
  PodCluster cluster(1, "50ms", true, /*carts=*/true, "entity_max_idle_time = \"500ms\"");
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-a", 0});
  cluster.proxy().send_to(cluster.carts_of(1), CartAdd{"cart-a", 0});
  auto before = cluster.proxy().request_fallible(CartGet{"cart-a"}, cluster.carts_of(1));
  REQUIRE(before);
  CHECK(before->items == 2);
  REQUIRE(eventually([&] { return cluster.registry(1).size() == 0; }));
  CHECK(cluster.carts().running_on(PodCluster::ref(1).address) == 0);
  // The old incarnation leaves the registry a moment before it leaves its group: a request in
  // between finds its mailbox closed and fails as refused (Failed), which request_entity tries
  // again. So does the test.
  auto after = cluster.proxy().request_fallible(CartGet{"cart-a"}, cluster.carts_of(1));
  for (int attempt = 0; attempt < 100 && !after && after.error() == elfin::RequestError::Failed; ++attempt) {
    after = cluster.proxy().request_fallible(CartGet{"cart-a"}, cluster.carts_of(1));
  }
  INFO((after ? std::string("answered") : to_string(after.error())));
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

TEST_CASE(
    "sharding pods: an entity that ignores the termination message is killed at entity_termination_timeout, and the "
    "unassign is acknowledged only once it is gone",
    "[sharding]") {
  PodCluster cluster(1, "1h", true, /*carts=*/true, "entity_termination_timeout = \"500ms\"");
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  // The stubborn cart waits for an answer that never comes: the termination message stays queued.
  const std::string id = "stubborn-1";
  cluster.proxy().send_to(cluster.carts_of(1), CartAdd{id, 0});
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(1).address) == 1; }));
  const auto function = elfin::hashing::ShardFunction::parse("jump-xxh64/1:16").value();
  const std::uint32_t shard = function.shard_of(id).value();

  const auto asked = std::chrono::steady_clock::now();
  auto ack = cluster.proxy().request_fallible(
      elfin::protocols::sharding::UnassignShards{PodCluster::ref(1), {shard}, cluster.cache(1).epoch() + 1},
      elfin::Addr{cluster.cache(1).endpoint()});
  const auto waited = std::chrono::steady_clock::now() - asked;
  REQUIRE(ack);
  CHECK(*ack);
  // Answered after the timeout, and only once the cart no longer ran.
  CHECK(waited >= std::chrono::milliseconds{500});
  CHECK(cluster.carts().running_on(PodCluster::ref(1).address) == 0);
  CHECK(cluster.registry(1).size() == 0);
  CHECK(metric(cluster.proxy(), "elfin_sharding_entity_kills_total") == 1);
}

namespace {

/// `count` numbered CartAdds for `cart`, from `first` on, each sent without waiting; how many
/// the pod's cart group took.
std::uint64_t send_numbered(PodCluster& cluster, std::size_t pod, const std::string& cart, std::uint64_t first,
                            std::uint64_t count) {
  std::uint64_t taken = 0;
  for (std::uint64_t seq = first; seq < first + count; ++seq) {
    if (cluster.proxy().try_send_to(cluster.carts_of(pod), CartAdd{cart, seq})) ++taken;
  }
  return taken;
}

std::vector<std::uint64_t> seqs(const std::vector<std::pair<std::uint64_t, std::string>>& added) {
  std::vector<std::uint64_t> out;
  out.reserve(added.size());
  for (const auto& [seq, pod] : added) out.push_back(seq);
  return out;
}

std::vector<std::uint64_t> one_to(std::uint64_t n) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t seq = 1; seq <= n; ++seq) out.push_back(seq);
  return out;
}

}  // namespace

TEST_CASE(
    "sharding pods: messages sent while an entity passivates are held and delivered, in order, to its next "
    "incarnation",
    "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true,
                     "entity_max_idle_time = \"100ms\"\nentity_termination_timeout = \"400ms\"");
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  // The lingering cart stops only when killed: it stays "stopping" for entity_termination_timeout.
  const std::string id = "lingering-1";
  REQUIRE(send_numbered(cluster, 1, id, 1, 1) == 1);
  REQUIRE(eventually([&] { return cluster.registry(1).stopping(id); }));
  constexpr std::uint64_t kHeld = 50;
  CHECK(send_numbered(cluster, 1, id, 2, kHeld) == kHeld);  // none refused

  REQUIRE(eventually([&] { return cluster.carts().added(id).size() == kHeld + 1; }));
  CHECK(seqs(cluster.carts().added(id)) == one_to(kHeld + 1));
  CHECK(cluster.carts().starts() == 2);  // the held ones went to one new incarnation
  CHECK(metric(cluster.proxy(), "elfin_sharding_held_messages_delivered_total") == kHeld);
  CHECK(metric(cluster.proxy(), "elfin_sharding_entity_kills_total") >= 1);
}

TEST_CASE(
    "sharding pods: messages sent while an entity stops for a handoff are held and delivered, in order, to its next "
    "incarnation on the new owner",
    "[sharding]") {
  // Pod 2 reaches the manager only later: pod 1 takes every shard first, then hands half over.
  PodCluster cluster(2, "50ms", true, /*carts=*/true, "entity_termination_timeout = \"1s\"", false, {2});
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const auto function = elfin::hashing::ShardFunction::parse("jump-xxh64/1:16").value();
  // A lingering cart on every shard: whichever shards move, their carts stop only when killed.
  std::map<std::uint32_t, std::string> carts;
  for (int i = 0; carts.size() < PodCluster::kShards; ++i) {
    const std::string id = fmt::format("lingering-{}", i);
    carts.try_emplace(function.shard_of(id).value(), id);
  }
  for (const auto& [shard, id] : carts) REQUIRE(send_numbered(cluster, 1, id, 1, 1) == 1);
  REQUIRE(eventually([&] { return cluster.carts().running_on("pod-1") == PodCluster::kShards; }));

  cluster.bring_manager_back();
  std::string moving;
  REQUIRE(eventually([&] {
    for (const auto& [shard, id] : carts) {
      if (cluster.registry(1).stopping(id)) moving = id;
    }
    return !moving.empty();
  }));
  constexpr std::uint64_t kHeld = 20;
  CHECK(send_numbered(cluster, 1, moving, 2, kHeld) == kHeld);  // sent to the old owner, none refused

  REQUIRE(eventually([&] { return cluster.carts().added(moving).size() == kHeld + 1; }));
  const auto added = cluster.carts().added(moving);
  CHECK(seqs(added) == one_to(kHeld + 1));
  CHECK(added.front().second == "pod-1");
  for (std::size_t i = 1; i < added.size(); ++i) CHECK(added[i].second == "pod-2");
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE(
    "sharding pods: what is held for an entity of a pod that stops gracefully goes to the shard's new owner, a request "
    "answered there",
    "[sharding]") {
  PodCluster cluster(2, "50ms", true, /*carts=*/true, "entity_termination_timeout = \"1s\"");
  REQUIRE(eventually([&] {
    return cluster.cache(1).owned().size() + cluster.cache(2).owned().size() == PodCluster::kShards &&
           !cluster.cache(2).owned().empty();
  }));
  std::string id;
  for (int i = 0; id.empty(); ++i) {
    const std::string candidate = fmt::format("lingering-{}", i);
    if (cluster.owner_of(candidate) == 2) id = candidate;
  }
  REQUIRE(send_numbered(cluster, 2, id, 1, 1) == 1);
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(2).address) == 1; }));

  // The pod stops: its lingering cart is killed only at entity_termination_timeout, and the pod
  // unregisters after that, so the cart's shard gets its next owner only once its messages are
  // held. Nothing tells an unregistered pod of that owner unless it asks.
  cluster.proxy().send_to(cluster.group(2), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.registry(2).stopping(id); }));
  constexpr std::uint64_t kHeld = 10;
  CHECK(send_numbered(cluster, 2, id, 2, kHeld) == kHeld);
  // Sent to the stopping pod, held there behind the adds, answered by the new owner's cart well
  // before hold_timeout (10 s). Every attempt goes to pod 2, which refuses once it held nothing:
  // only the held one can be answered.
  const elfin::test::ClientAnswer answer = cluster.client_get(id, 2, std::chrono::milliseconds{5000});
  INFO(answer.error);
  REQUIRE(answer.ok);
  CHECK(answer.state.pod == PodCluster::ref(1).address);
  CHECK(answer.state.items == kHeld);
  CHECK(seqs(cluster.carts().added(id)) == one_to(kHeld + 1));
  check_no_cart_on_two_pods(cluster);
}

TEST_CASE("sharding pods: a held request that finds no owner within hold_timeout fails as refused, never as ignored",
          "[sharding]") {
  PodCluster cluster(1, "50ms", true, /*carts=*/true, "entity_termination_timeout = \"300ms\"", false, {}, "",
                     std::chrono::milliseconds{100});
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const std::string id = "lingering-1";
  REQUIRE(send_numbered(cluster, 1, id, 1, 1) == 1);
  REQUIRE(eventually([&] { return cluster.carts().running_on(PodCluster::ref(1).address) == 1; }));

  // The only pod stops: once its cart is killed, the held request finds no owner (there is no
  // other pod) and is dropped at hold_timeout. It reached no entity: the sender may try again
  // (here the stopped pod refuses each retry until send_timeout). As Ignored it would end at once
  // with Refused, as if an entity had dropped it.
  cluster.proxy().send_to(cluster.group(1), elfin::Terminate{});
  REQUIRE(eventually([&] { return cluster.registry(1).stopping(id); }));
  const elfin::test::ClientAnswer answer = cluster.client_get(id, 1, std::chrono::milliseconds{2000});
  INFO(answer.error);
  CHECK_FALSE(answer.ok);
  CHECK(answer.kind == static_cast<std::int32_t>(elfin::actors::sharding::EntitySendErrorKind::NoOwner));
  CHECK(metric(cluster.proxy(), "elfin_sharding_held_messages_dropped_total") == 1);
}

TEST_CASE(
    "sharding pods: a flood held for a stopping entity while the helper cannot run is taken whole, delivered in "
    "order, and leaves nothing counted as held",
    "[sharding]") {
  // More than any bounded helper mailbox would take while no worker runs the helper: a send it
  // refused would stay counted as held, and the entity's later messages would go through the
  // helper for ever (a graceful stop would wait for them). The idle time is long enough that the
  // next incarnation, fed by the helper, is not passivated again midway (sanitized builds).
  constexpr std::uint64_t kFlood = 120'000;
  PodCluster cluster(1, "50ms", true, /*carts=*/true,
                     "entity_max_idle_time = \"3s\"\nentity_termination_timeout = \"400ms\"", false, {}, "",
                     std::chrono::seconds{30}, /*max_held=*/kFlood + 1);
  REQUIRE(eventually([&] { return cluster.cache(1).owned().size() == PodCluster::kShards; }));
  const std::string id = "lingering-1";
  REQUIRE(send_numbered(cluster, 1, id, 1, 1) == 1);
  REQUIRE(eventually([&] { return cluster.registry(1).stopping(id); }));

  // Every worker stalls, so the helper takes nothing out of its mailbox while the flood arrives
  // (the router runs on the sending thread, this one). Released however the test ends, or the
  // cluster could not stop.
  struct Release {
    elfin::test::CartWorld& world;
    ~Release() { world.release_busy(); }
  } release{cluster.carts()};
  for (unsigned i = 0; i < PodCluster::kWorkers; ++i) {
    REQUIRE(send_numbered(cluster, 1, fmt::format("busy-{}", i), 0, 1) == 1);
  }
  REQUIRE(eventually([&] { return cluster.carts().busy() == static_cast<int>(PodCluster::kWorkers); }));
  const std::uint64_t taken = send_numbered(cluster, 1, id, 2, kFlood);
  cluster.carts().release_busy();
  CHECK(taken == kFlood);

  REQUIRE(eventually([&] { return cluster.carts().added_count(id) == taken + 1; }, std::chrono::seconds{30},
                     std::chrono::milliseconds{10}));
  CHECK(seqs(cluster.carts().added(id)) == one_to(taken + 1));
  CHECK(eventually([&] { return !cluster.registry(1).holding(); }));
}
