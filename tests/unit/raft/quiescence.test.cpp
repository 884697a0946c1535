// Quiescence: an idle group stops ticking and heartbeating once every replica holds the whole,
// committed log; anything but the handshake wakes it; a lagging replica keeps it awake; a
// quiesced follower campaigns only when told its leader's node is down; a follower reported down
// does not keep a quorum that is caught up awake.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

namespace {

constexpr int kQuiesceAfter = 3;

sim::Options quiet(std::size_t nodes, int quiesce_after = kQuiesceAfter) {
  sim::Options options = manual(nodes);
  options.config.quiesce_after_ticks = quiesce_after;
  return options;
}

bool all_quiesced(sim::Cluster& cluster) {
  for (NodeId id : cluster.ids()) {
    if (cluster.alive(id) && !cluster.node(id).quiesced()) {
      return false;
    }
  }
  return true;
}

std::uint64_t total_sent(const sim::Cluster& cluster) {
  std::uint64_t n = 0;
  for (int t = 0; t <= static_cast<int>(MessageType::ReadIndexResponse); ++t) {
    n += cluster.sent(static_cast<MessageType>(t));
  }
  return n;
}

/// Ticks every node (settling after each tick) until `done()`; the ticks it took, or -1.
template <class Done>
int tick_until(sim::Cluster& cluster, Done done, int max_ticks) {
  for (int k = 0; k < max_ticks; ++k) {
    if (done()) {
      return k;
    }
    cluster.tick_all();
    cluster.settle();
  }
  return done() ? max_ticks : -1;
}

/// The same until the group quiesces.
int tick_until_quiesced(sim::Cluster& cluster, int max_ticks = 50) {
  return tick_until(cluster, [&] { return all_quiesced(cluster); }, max_ticks);
}

void idle(sim::Cluster& cluster, int ticks) {
  for (int k = 0; k < ticks; ++k) {
    cluster.tick_all();
    cluster.settle();
  }
}

}  // namespace

TEST_CASE("an idle group quiesces after quiesce_after_ticks, then ticks do nothing and nothing is sent", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(cluster.propose(leader));
  cluster.settle();
  const Term term = cluster.node(leader).term();
  const int took = tick_until_quiesced(cluster);
  INFO("ticks until quiesced: " << took);
  REQUIRE(took >= kQuiesceAfter);
  CHECK(took <= kQuiesceAfter + 1);  // the idle ticks, then one handshake round within a tick
  const std::uint64_t sent = total_sent(cluster);
  idle(cluster, 1000);  // 1000 ticks: 100 election timeouts
  CHECK(total_sent(cluster) == sent);
  CHECK(all_quiesced(cluster));
  for (NodeId id : cluster.ids()) {
    CHECK(cluster.node(id).term() == term);
    CHECK(cluster.node(id).leader() == leader);
    CHECK(cluster.node(id).commit() == cluster.node(leader).last_index());
  }
  CHECK(cluster.failure().empty());
}

TEST_CASE("without quiescence the same idle group heartbeats every tick (what the feature saves)", "[raft]") {
  sim::Cluster cluster(quiet(3, 0));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  const std::uint64_t sent = total_sent(cluster);
  idle(cluster, 1000);
  CHECK_FALSE(cluster.node(leader).quiesced());
  // A heartbeat and a response per follower per tick.
  CHECK(total_sent(cluster) - sent >= 4000);
}

TEST_CASE("a lone voter quiesces as soon as what it wrote is applied, without idle ticks", "[raft]") {
  sim::Cluster cluster(quiet(1));
  REQUIRE(elect_by_ticks(cluster) == 1);
  CHECK(tick_until_quiesced(cluster) == 0);  // its no-op is applied: asleep already
  for (int k = 0; k < 3; ++k) {
    auto index = cluster.propose(1);  // wakes it; written, committed and applied at once here
    REQUIRE(index);
    CHECK(cluster.applied_index(1) == *index);
    CHECK(cluster.node(1).quiesced());
  }
  CHECK(cluster.acknowledged().size() == 3);
}

TEST_CASE("a lone voter never quiesces when quiescence is off", "[raft]") {
  sim::Cluster cluster(quiet(1, 0));
  REQUIRE(elect_by_ticks(cluster) == 1);
  REQUIRE(cluster.propose(1));
  cluster.settle();
  idle(cluster, 100);
  CHECK_FALSE(cluster.node(1).quiesced());
}

TEST_CASE(
    "a proposal to a quiesced leader wakes the group with its Appends and commits in one round, then it quiesces "
    "again",
    "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(tick_until_quiesced(cluster) >= 0);
  const auto heartbeats = cluster.sent(MessageType::Heartbeat);
  auto index = cluster.propose(leader);
  REQUIRE(index);
  CHECK_FALSE(cluster.node(leader).quiesced());
  // No tick needed: the Appends go out at once and the followers wake on them, with no
  // heartbeat round of the leader's own before them.
  cluster.settle();
  CHECK(cluster.sent(MessageType::Heartbeat) == heartbeats);
  for (NodeId id : cluster.ids()) {
    CHECK_FALSE(cluster.node(id).quiesced());
    CHECK(cluster.applied_index(id) == *index);
  }
  CHECK(cluster.acknowledged().size() == 1);
  CHECK(tick_until_quiesced(cluster) >= kQuiesceAfter);
  CHECK(cluster.failure().empty());
}

TEST_CASE("a read on a quiesced leader wakes it and is answered", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(tick_until_quiesced(cluster) >= 0);
  cluster.read(leader);
  cluster.settle();
  REQUIRE(cluster.reads(leader).size() == 1);
  CHECK_FALSE(cluster.reads(leader).front().rejected);
  CHECK(cluster.failure().empty());
}

TEST_CASE("a quiesced follower never campaigns by itself, and told its leader's node is down, it elects a new leader",
          "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(cluster.propose(leader));
  cluster.settle();
  REQUIRE(tick_until_quiesced(cluster) >= 0);
  const Term term = cluster.node(leader).term();
  cluster.crash(leader);
  idle(cluster, 500);  // 50 election timeouts: still nothing, as long as nobody reports the death
  for (NodeId id : cluster.ids()) {
    if (id == leader) continue;
    CHECK(cluster.node(id).quiesced());
    CHECK(cluster.node(id).term() == term);
  }
  // The liveness signal: the new leader comes within election_tick ticks (plus the rounds).
  cluster.report_liveness();
  const int ticks = tick_until(cluster, [&] { return cluster.leader() != 0; }, 100);
  INFO("ticks to a new leader after the report: " << ticks);
  CHECK(cluster.leader() != 0);
  CHECK(ticks >= 0);
  CHECK(ticks <= 10);
  CHECK(cluster.node(cluster.leader()).term() > term);
  CHECK(cluster.failure().empty());
}

TEST_CASE("report_node_down of a node that does not lead, or on an awake follower, changes nothing", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(tick_until_quiesced(cluster) >= 0);
  const NodeId follower = leader == 1 ? 2 : 1;
  const NodeId other = 6 - leader - follower;
  cluster.node(follower).report_node_down(other);
  CHECK(cluster.node(follower).quiesced());
  CHECK(cluster.node(follower).leader() == leader);
  cluster.node(leader).report_node_down(follower);
  CHECK(cluster.node(leader).quiesced());
}

TEST_CASE("a cut-off follower keeps its leader awake, and healed, it catches up and then the group quiesces",
          "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  const NodeId lagging = leader == 3 ? 2 : 3;
  cluster.isolate(lagging);
  for (int k = 0; k < 5; ++k) REQUIRE(cluster.propose(leader));
  cluster.settle();
  idle(cluster, 30);
  // The leader never quiesces without it (it keeps heartbeating, the follower keeps campaigning).
  CHECK_FALSE(cluster.node(leader).quiesced());
  CHECK(cluster.applied_index(lagging) < cluster.node(leader).last_index());
  cluster.heal();
  const int ticks = tick_until(cluster, [&] { return all_quiesced(cluster); }, 100);
  INFO("ticks after the heal: " << ticks);
  CHECK(all_quiesced(cluster));
  const NodeId now_leading = cluster.leader();
  REQUIRE(now_leading != 0);
  for (NodeId id : cluster.ids()) CHECK(cluster.applied_index(id) == cluster.node(now_leading).last_index());
  CHECK(cluster.failure().empty());
}

TEST_CASE("a follower that misses the quiescing heartbeats keeps the leader heartbeating", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  const NodeId deaf = leader == 3 ? 2 : 3;
  cluster.set_filter([&](const Message& m) { return m.quiesce && m.to == deaf; });
  const std::uint64_t heartbeats = cluster.sent(MessageType::Heartbeat);
  const Term term = cluster.node(leader).term();
  idle(cluster, 20);
  CHECK_FALSE(cluster.node(leader).quiesced());
  CHECK_FALSE(cluster.node(deaf).quiesced());
  CHECK(cluster.sent(MessageType::Heartbeat) - heartbeats >= std::uint64_t{2} * 20);
  // It hears no heartbeat at all and pre-votes, but the leader stays (pre-vote, stickiness).
  CHECK(cluster.node(leader).role() == Role::Leader);
  CHECK(cluster.node(leader).term() == term);
  cluster.set_filter(nullptr);
  CHECK(tick_until_quiesced(cluster) >= 0);
}

TEST_CASE("a restarted follower wakes a quiesced group with its pre-vote and rejoins the same leader", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  REQUIRE(tick_until_quiesced(cluster) >= 0);
  const Term term = cluster.node(leader).term();
  const NodeId follower = leader == 3 ? 2 : 3;
  cluster.crash(follower);
  cluster.restart(follower);
  CHECK_FALSE(cluster.node(follower).quiesced());
  CHECK(tick_until(cluster, [&] { return cluster.node(follower).leader() == leader; }, 100) >= 0);
  CHECK(cluster.node(leader).term() == term);  // pre-vote: the leader was not disturbed
  CHECK(tick_until_quiesced(cluster) >= 0);
  CHECK(cluster.failure().empty());
}

TEST_CASE(
    "a leader quiesces without a follower reported down once the rest are caught up, and healed, the follower "
    "wakes the group and catches up",
    "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  const NodeId gone = leader == 3 ? 2 : 3;
  const NodeId other = 6 - leader - gone;
  cluster.isolate(gone);
  for (int k = 0; k < 5; ++k) REQUIRE(cluster.propose(leader));
  cluster.settle();
  idle(cluster, 30);
  REQUIRE_FALSE(cluster.node(leader).quiesced());  // as before: it waits for every follower
  cluster.node(leader).report_node_down(gone);
  int ticks =
      tick_until(cluster, [&] { return cluster.node(leader).quiesced() && cluster.node(other).quiesced(); }, 50);
  INFO("ticks until the two quiesced: " << ticks);
  REQUIRE(cluster.node(leader).quiesced());
  REQUIRE(cluster.node(other).quiesced());
  const Term term = cluster.node(leader).term();
  const std::uint64_t heartbeats = cluster.sent(MessageType::Heartbeat);
  idle(cluster, 200);  // the cut-off follower campaigns into the void meanwhile
  CHECK(cluster.sent(MessageType::Heartbeat) == heartbeats);
  CHECK(cluster.node(leader).quiesced());
  CHECK(cluster.node(leader).term() == term);
  CHECK(cluster.applied_index(gone) < cluster.node(leader).last_index());
  cluster.heal();
  ticks = tick_until(cluster, [&] { return all_quiesced(cluster); }, 100);
  INFO("ticks after the heal: " << ticks);
  CHECK(all_quiesced(cluster));
  CHECK(cluster.node(leader).role() == Role::Leader);  // pre-vote: the returning node disturbed no one
  CHECK(cluster.applied_index(gone) == cluster.node(leader).last_index());
  CHECK(cluster.failure().empty());
}

TEST_CASE(
    "report_node_up wakes a leader that quiesced without that follower, and it stays awake until the follower "
    "answers",
    "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  const NodeId gone = leader == 3 ? 2 : 3;
  cluster.crash(gone);
  REQUIRE(cluster.propose(leader));
  cluster.settle();
  cluster.node(leader).report_node_down(gone);
  REQUIRE(tick_until_quiesced(cluster) >= 0);  // the crashed node does not count
  const std::uint64_t heartbeats = cluster.sent(MessageType::Heartbeat);
  cluster.node(leader).report_node_up(gone);
  CHECK_FALSE(cluster.node(leader).quiesced());
  idle(cluster, 20);
  CHECK_FALSE(cluster.node(leader).quiesced());  // up but silent: it keeps the group awake
  CHECK(cluster.sent(MessageType::Heartbeat) > heartbeats);
  cluster.restart(gone);
  CHECK(tick_until_quiesced(cluster, 100) >= 0);
  CHECK(cluster.applied_index(gone) == cluster.node(leader).last_index());
  CHECK(cluster.failure().empty());
}

TEST_CASE("a leader whose followers are all reported down does not quiesce: it alone is no quorum", "[raft]") {
  sim::Cluster cluster(quiet(3));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  for (NodeId id : cluster.ids()) {
    if (id == leader) continue;
    cluster.crash(id);
    cluster.node(leader).report_node_down(id);
  }
  for (int k = 0; k < 30 && cluster.node(leader).role() == Role::Leader; ++k) {
    cluster.tick_all();
    cluster.settle();
    CHECK_FALSE(cluster.node(leader).quiesced());
  }
}
