// Broadcasts and owner hints across pod nodes over real loopback TCP (three or two nodes in one
// process): a broadcast gets every listed pod's answer or a typed per-pod error, and a request
// refused by a pod that does not own the shard learns, typed, who does and goes straight there.
#include <array>
#include <chrono>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "pod_nodes.hpp"

using elfin::actors::sharding::BroadcastErrorKind;
using elfin::test::AskAllPods;
using elfin::test::eventually;
using elfin::test::PodNodes;
using elfin::test::PodReply;

namespace {

const PodReply* reply_of(const std::vector<PodReply>& replies, const std::string& pod) {
  for (const auto& r : replies) {
    if (r.pod == pod) return &r;
  }
  return nullptr;
}

// The replies of pod-1, pod-2 and pod-3 to a broadcast to three pods, each one required.
std::array<const PodReply*, 3> replies_of_three(const std::vector<PodReply>& replies) {
  REQUIRE(replies.size() == 3);
  std::array<const PodReply*, 3> by_pod{};
  for (std::size_t i = 0; i < by_pod.size(); ++i) {
    by_pod[i] = reply_of(replies, PodNodes::pod_name(i + 1));
    REQUIRE(by_pod[i]);
  }
  return by_pod;
}

double node_metric(elfin::testing::Proxy& proxy, std::string_view name) {
  double total = 0;
  for (const auto& sample : proxy.system().scrape_metrics()) {
    if (sample.name == name) total += sample.value;
  }
  return total;
}

}  // namespace

TEST_CASE("sharding pods: a broadcast gets every pod's answer, and a typed error for a pod that gives none",
          "[sharding]") {
  PodNodes nodes(3);
  REQUIRE(nodes.settled());
  auto all = nodes.proxy(1).request_fallible(AskAllPods{});
  REQUIRE(all);
  REQUIRE(all->size() == 3);
  for (std::size_t i = 1; i <= 3; ++i) {
    const auto* reply = reply_of(*all, PodNodes::pod_name(i));
    REQUIRE(reply);
    CHECK(reply->ok);
    CHECK(reply->answer == PodNodes::pod_name(i));  // each pod's own group answered
  }

  // pod-2's group drops the request; pod-3's node goes away while the map still lists it.
  nodes.node(2).mute->store(true);
  nodes.kill(3);
  REQUIRE(eventually([&] { return nodes.peers(1) == 1; }));
  auto some = nodes.proxy(1).request_fallible(AskAllPods{});
  REQUIRE(some);
  const auto [one, two, three] = replies_of_three(*some);
  CHECK(one->ok);
  CHECK(one->answer == "pod-1");
  CHECK_FALSE(two->ok);
  CHECK(two->kind == static_cast<std::int32_t>(BroadcastErrorKind::Ignored));
  CHECK_FALSE(three->ok);
  INFO(three->detail);
  CHECK((three->kind == static_cast<std::int32_t>(BroadcastErrorKind::NotDelivered) ||
         three->kind == static_cast<std::int32_t>(BroadcastErrorKind::Unreachable)));

  // The unreachable pod was reported: the manager finds it dead and the map drops it.
  REQUIRE(eventually([&] { return nodes.node(1).cache->pods().size() == 2; }));
  nodes.node(2).mute->store(false);
  auto after = nodes.proxy(1).request_fallible(AskAllPods{});
  REQUIRE(after);
  CHECK(after->size() == 2);
}

TEST_CASE("sharding pods: a refused request follows the typed NotOwner hint straight to the owner", "[sharding]") {
  PodNodes nodes(2);
  REQUIRE(nodes.settled());
  auto function = elfin::hashing::ShardFunction::parse(elfin::test::kPodNodesFunction).value();
  // A cart pod-1 owns, sent from node 1 to pod-2's entity group directly: pod-2 refuses it.
  std::string cart;
  std::uint32_t shard = 0;
  for (int i = 0; cart.empty(); ++i) {
    const std::string id = fmt::format("cart-{}", i);
    shard = function.shard_of(id).value();
    if (nodes.node(1).cache->owns(shard)) cart = id;
  }
  const elfin::Addr wrong = nodes.proxy(2).system().group_addr("carts.local");

  // The refusing pod says why, typed: not the owner, at its epoch, and who is.
  auto why = nodes.proxy(1).request_fallible(elfin::protocols::sharding::ShardOwner{shard}, wrong);
  REQUIRE(why);
  REQUIRE_FALSE(*why);
  const auto& refusal = why->error();
  CHECK(refusal.kind == elfin::protocols::sharding::ShardingErrorKind::NotOwner);
  REQUIRE(refusal.not_owner);
  CHECK(refusal.not_owner->shard == shard);
  CHECK(refusal.not_owner->epoch == nodes.node(2).cache->epoch());
  REQUIRE(refusal.not_owner->owner);
  CHECK(refusal.not_owner->owner->pod.address == "pod-1");
  // The owner answers Ok.
  auto mine = nodes.proxy(1).request_fallible(elfin::protocols::sharding::ShardOwner{shard},
                                              nodes.proxy(1).system().group_addr("carts.local"));
  REQUIRE(mine);
  CHECK(*mine);

  const auto get = [&](bool follow) {
    elfin::test::ClientGet ask{cart, wrong.raw(), nodes.node(1).cache->endpoint(), 1000, -1, ""};
    if (follow) {
      ask.shard = shard;
      ask.group = "carts.local";
    }
    return nodes.proxy(1).request_fallible(ask).value();
  };
  // Without the hint, nothing changes ownership: the retries end in the typed timeout.
  const auto stuck = get(false);
  CHECK_FALSE(stuck.ok);
  // With it: refused once, asked why, answered by the owner.
  const double before = node_metric(nodes.proxy(1), "elfin_sharding_owner_hints_followed_total");
  const auto answer = get(true);
  REQUIRE(answer.ok);
  CHECK(answer.state.pod == "pod-1");
  CHECK(node_metric(nodes.proxy(1), "elfin_sharding_owner_hints_followed_total") == before + 1);
}

TEST_CASE(
    "sharding pods: a broadcast asks every pod at once, and a pod holding the request gives TimedOut at pod_timeout",
    "[sharding]") {
  PodNodes nodes(3);
  REQUIRE(nodes.settled());
  // pod-2's and pod-3's groups take the request and never answer (as a stuck actor or a process
  // stopped with SIGSTOP would).
  nodes.node(2).hold->store(true);
  nodes.node(3).hold->store(true);
  constexpr std::uint32_t kPodTimeout = 2000;
  auto some = nodes.proxy(1).request_fallible(AskAllPods{kPodTimeout});
  REQUIRE(some);
  const auto [one, two, three] = replies_of_three(*some);
  CHECK(one->ok);
  CHECK(one->answer == "pod-1");
  CHECK_FALSE(two->ok);
  CHECK(two->kind == static_cast<std::int32_t>(BroadcastErrorKind::TimedOut));
  CHECK_FALSE(three->ok);
  CHECK(three->kind == static_cast<std::int32_t>(BroadcastErrorKind::TimedOut));
  // Asked at once: pod-3 had the request while pod-2 still held its own. Asked one after the
  // other, pod-3 would have been asked only once pod-2's pod_timeout was over.
  const auto at2 = std::chrono::steady_clock::duration{nodes.node(2).asked_at->load()};
  const auto at3 = std::chrono::steady_clock::duration{nodes.node(3).asked_at->load()};
  REQUIRE(at2.count() != 0);
  REQUIRE(at3.count() != 0);
  CHECK(std::chrono::abs(at3 - at2) < std::chrono::milliseconds{kPodTimeout / 2});

  // Once they answer again, so does the broadcast.
  nodes.node(2).hold->store(false);
  nodes.node(3).hold->store(false);
  auto all = nodes.proxy(1).request_fallible(AskAllPods{kPodTimeout});
  REQUIRE(all);
  for (const auto& reply : *all) CHECK(reply.ok);
}
