// Partitions replicated across three nodes in one process over loopback TCP: election, replication
// in order, NotLeader hints, leader loss, restart and catch-up (from the log and from a snapshot),
// linearizable reads. Real WAL files with fdatasync, real sockets; time is real (20 ms ticks), so
// every wait is a condition polled with a deadline.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cluster.hpp"

using namespace partition_test;

namespace {

/// What `propose_many` got back: the values acknowledged (in order), and how many proposals had
/// an unknown outcome (Dropped or Timeout, during a leader change).
struct Proposals {
  std::vector<std::string> acknowledged;
  std::vector<std::uint64_t> indexes;  ///< of the acknowledged ones
  int unknown = 0;
};

/// Proposes `count` puts of key `key` (values prefix-0, prefix-1, ...) at the leader, following
/// NotLeader hints (a refused proposal was not applied, so it is sent again) until a deadline.
/// On a loaded machine a heartbeat can come late enough for a follower to campaign; the tests
/// then check the acknowledged proposals, which is what Raft promises about.
Proposals propose_many(Cluster& cluster, std::uint64_t partition, std::uint16_t leader, int count,
                       const std::string& prefix, const std::string& key = "k") {
  Proposals out;
  for (int i = 0; i < count; ++i) {
    const std::string value = fmt::format("{}-{}", prefix, i);
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    for (;;) {
      auto answer = cluster.propose(leader, partition, put(key, value));
      if (answer) {
        out.acknowledged.push_back(value);
        out.indexes.push_back(answer->index);
        break;
      }
      const auto& error = answer.error();
      if (error.kind != pr::RaftErrorKind::NotLeader || std::chrono::steady_clock::now() > deadline) {
        ++out.unknown;
        break;
      }
      if (error.leader_hint != 0) {
        leader = static_cast<std::uint16_t>(error.leader_hint);
      } else if (auto found = cluster.leader(partition)) {
        leader = *found;
      }
    }
  }
  return out;
}

/// The values node `n` applied for `partition`, in apply order.
std::vector<std::string> values(Cluster& cluster, std::uint16_t n, std::uint64_t partition) {
  std::vector<std::string> out;
  for (const auto& record : cluster.applied().log(n, partition)) out.push_back(record.value);
  return out;
}

bool contains_all(const std::vector<std::string>& applied, const std::vector<std::string>& wanted) {
  const std::set<std::string> have(applied.begin(), applied.end());
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& v) { return have.contains(v); });
}

}  // namespace

TEST_CASE("partition actors: the replicas of a partition elect one leader", "[partition_actors]") {
  Cluster cluster;
  const auto leader = cluster.leader(1);
  REQUIRE(leader);
  int leaders = 0;
  for (auto n : cluster.node_numbers()) {
    auto status = cluster.status(n, 1);
    REQUIRE(status);
    CHECK(status->leader == *leader);
    CHECK(status->conf.voters == std::vector<std::uint64_t>{1, 2, 3});
    leaders += status->role == pr::Role::Leader;
  }
  CHECK(leaders == 1);
}

TEST_CASE("partition actors: proposals are applied on all three replicas in the same order", "[partition_actors]") {
  Cluster cluster;
  const auto leader = cluster.leader(2);
  REQUIRE(leader);
  const Proposals proposals = propose_many(cluster, 2, *leader, 30, "v");
  REQUIRE(proposals.acknowledged.size() >= 20);  // all of them unless a leader change got in the way
  for (std::size_t i = 1; i < proposals.indexes.size(); ++i) CHECK(proposals.indexes[i] > proposals.indexes[i - 1]);
  const auto leader_now = cluster.leader(2);
  REQUIRE(leader_now);
  const auto status = cluster.status(*leader_now, 2);
  REQUIRE(status);
  REQUIRE(cluster.all_applied(2, status->commit));
  // Every replica applied the same commands in the same order, each once, the acknowledged ones
  // among them in the order they were acknowledged.
  const auto reference = values(cluster, *leader_now, 2);
  for (auto n : cluster.node_numbers()) CHECK(values(cluster, n, 2) == reference);
  CHECK(std::set<std::string>(reference.begin(), reference.end()).size() == reference.size());
  std::size_t at = 0;
  for (const auto& value : proposals.acknowledged) {
    while (at < reference.size() && reference[at] != value) ++at;
    CHECK(at < reference.size());  // found, after the one acknowledged before it
  }
  if (proposals.unknown == 0) CHECK(reference.size() == 30);
}

TEST_CASE("partition actors: a proposal's answer is the state machine's response to it", "[partition_actors]") {
  Cluster cluster;
  const auto leader = cluster.leader(7);
  REQUIRE(leader);
  auto answer = cluster.propose(*leader, 7, put("key", "value"));
  REQUIRE(answer);
  // A Put's response carries the key's new version, which is the entry's log index.
  const auto response = pk::decode_kv_response(answer->response);
  CHECK(response.ok);
  CHECK(response.version == answer->index);
  auto cas = cluster.propose(*leader, 7, pk::encode(pk::KvCommand{pk::KvOp::Cas, "key", "next", answer->index - 1}));
  REQUIRE(cas);
  CHECK_FALSE(pk::decode_kv_response(cas->response).ok);  // a stale version: refused by the state machine
}

TEST_CASE("partition actors: a follower answers NotLeader with the leader's node", "[partition_actors]") {
  Cluster cluster;
  const auto leader = cluster.leader(3);
  REQUIRE(leader);
  const std::uint16_t follower = *leader == 1 ? 2 : 1;
  auto answer = cluster.propose(follower, 3, put("k", "v"));
  REQUIRE_FALSE(answer);
  CHECK(answer.error().kind == pr::RaftErrorKind::NotLeader);
  CHECK(answer.error().leader_hint == *leader);
  auto read = cluster.read(follower, 3, get("k"));
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == pr::RaftErrorKind::NotLeader);
}

TEST_CASE("partition actors: a linearizable read at the leader sees every acknowledged write", "[partition_actors]") {
  Cluster cluster;
  const auto leader = cluster.leader(4);
  REQUIRE(leader);
  for (int i = 0; i < 5; ++i) {
    const std::string value = fmt::format("v{}", i);
    REQUIRE(cluster.propose(*leader, 4, put("key", value)));
    auto read = cluster.read(*leader, 4, get("key"));
    REQUIRE(read);
    CHECK(pk::decode_kv_response(read->response).value == value);
  }
}

TEST_CASE("partition actors: losing the leader's node elects a new leader and loses no acknowledged proposal",
          "[partition_actors]") {
  Cluster cluster;
  const auto first = cluster.leader(5);
  REQUIRE(first);
  const auto before = propose_many(cluster, 5, *first, 20, "before").acknowledged;
  REQUIRE(before.size() >= 10);
  cluster.stop(*first);
  const auto second = cluster.leader(5);
  REQUIRE(second);
  CHECK(*second != *first);
  const auto after = propose_many(cluster, 5, *second, 20, "after").acknowledged;
  REQUIRE(after.size() >= 10);
  auto last = cluster.status(*second, 5);
  REQUIRE(last);
  REQUIRE(cluster.all_applied(5, last->commit));
  for (auto n : cluster.node_numbers()) {
    if (!cluster.running(n)) continue;
    const auto applied = values(cluster, n, 5);
    CHECK(contains_all(applied, before));
    CHECK(contains_all(applied, after));
  }

  SECTION("and the old leader's node, restarted, catches up from the log") {
    cluster.applied().forget(*first);
    cluster.start(*first);
    REQUIRE(cluster.connected(*first));
    REQUIRE(cluster.all_applied(5, last->commit));
    const auto applied = values(cluster, *first, 5);
    CHECK(contains_all(applied, before));
    CHECK(contains_all(applied, after));
    CHECK(applied == values(cluster, *second, 5));
  }
}

TEST_CASE("partition actors: a replica that missed compacted entries catches up from a snapshot",
          "[partition_actors]") {
  Cluster cluster({3, "snapshot_every = 16\n"});
  const auto leader = cluster.leader(6);
  REQUIRE(leader);
  const std::uint16_t lagging = *leader == 3 ? 2 : 3;
  cluster.stop(lagging);
  // Several snapshots' worth of entries while it is away: the leader's log no longer holds them.
  for (int k = 0; k < 10; ++k) propose_many(cluster, 6, *leader, 6, fmt::format("v{}", k), fmt::format("key{}", k));
  const auto current = cluster.leader(6);
  REQUIRE(current);
  auto status = cluster.status(*current, 6);
  REQUIRE(status);
  CHECK(status->snapshot_index >= 48);
  cluster.applied().forget(lagging);
  cluster.start(lagging);
  REQUIRE(cluster.connected(lagging));
  REQUIRE(cluster.all_applied(6, status->commit));
  CHECK(cluster.applied().restores(lagging, 6) >= 1);
  for (int k = 0; k < 10; ++k) {
    const std::string key = fmt::format("key{}", k);
    auto at_leader = cluster.read(*current, 6, get(key), true);
    auto at_lagging = cluster.read(lagging, 6, get(key), true);
    REQUIRE(at_leader);
    REQUIRE(at_lagging);
    CHECK(pk::decode_kv_response(at_lagging->response) == pk::decode_kv_response(at_leader->response));
  }
}

TEST_CASE("partition actors: partitions elect and replicate independently of each other", "[partition_actors]") {
  Cluster cluster;
  constexpr std::uint64_t kPartitions = 8;
  std::map<std::uint64_t, std::uint16_t> leaders;
  // The first message naming a partition creates its actor: all of them at once, so that they
  // elect side by side.
  for (std::uint64_t p = 10; p < 10 + kPartitions; ++p) {
    for (auto n : cluster.node_numbers()) REQUIRE(cluster.status(n, p));
  }
  for (std::uint64_t p = 10; p < 10 + kPartitions; ++p) {
    auto leader = cluster.leader(p);
    REQUIRE(leader);
    leaders[p] = *leader;
  }
  for (const auto& [p, leader] : leaders) {
    auto answer = cluster.propose(leader, p, put("p", fmt::format("{}", p)));
    REQUIRE(answer);
    REQUIRE(cluster.all_applied(p, answer->index));
    for (auto n : cluster.node_numbers())
      CHECK(values(cluster, n, p) == std::vector<std::string>{fmt::format("{}", p)});
  }
}

TEST_CASE(
    "partition actors: idle partitions fall asleep over TCP, and stopping the node that leads them, they elect anew",
    "[partition_actors]") {
  // Asleep, the followers take no tick: only the liveness pings between the nodes (over the same
  // route as the Raft messages) can tell them that their leader's node is gone.
  Cluster cluster({.partition_extra = "quiesce_after_ticks = 3"});
  constexpr std::uint64_t kCount = 6;
  std::map<std::uint64_t, std::uint16_t> leaders;
  for (std::uint64_t p = 20; p < 20 + kCount; ++p) {
    const auto leader = cluster.leader(p);
    REQUIRE(leader);
    leaders[p] = *leader;
    REQUIRE(cluster.propose(*leader, p, put("k", fmt::format("v{}", p))));
  }
  const auto asleep = [&] {
    for (auto n : cluster.node_numbers()) {
      if (!cluster.running(n)) continue;
      for (const auto& [p, leader] : leaders) {
        auto s = cluster.status(n, p);
        if (!s || !s->quiesced) return false;
      }
    }
    return true;
  };
  REQUIRE(eventually(asleep, 15s));
  const std::uint16_t victim = leaders.begin()->second;
  cluster.stop(victim);
  for (const auto& [p, leader] : leaders) {
    if (leader != victim) continue;
    const auto next = cluster.leader(p, 15s);
    REQUIRE(next);
    CHECK(*next != victim);
    CHECK(cluster.propose(*next, p, put("k", "after")));
  }
}

TEST_CASE("partition actors: a partition with one replica sleeps as soon as its writes are applied, without ticks",
          "[partition_actors]") {
  // A lone voter has nobody to ask to sleep: its Node quiesces once the write is applied. Waiting
  // for quiesce_after_ticks idle ticks instead, each write here would cost at least 3 ticks.
  Cluster cluster({.nodes = 1, .partition_extra = "quiesce_after_ticks = 3"});
  constexpr std::uint64_t kPartition = 7;
  REQUIRE(cluster.leader(kPartition) == std::optional<std::uint16_t>{1});
  const auto asleep = [&] {
    auto s = cluster.status(1, kPartition);
    return s && s->quiesced;
  };
  REQUIRE(eventually(asleep, 15s));
  const std::uint64_t before = cluster.status(1, kPartition)->ticks;
  constexpr std::uint64_t kWrites = 10;
  for (std::uint64_t k = 0; k < kWrites; ++k) {
    REQUIRE(cluster.propose(1, kPartition, put("k", fmt::format("v{}", k))));
    REQUIRE(eventually(asleep, 15s));
  }
  // A tick of the clock's grid (20 ms) may fall within a write, awake for a sync: a few at most.
  CHECK(cluster.status(1, kPartition)->ticks - before < kWrites);
}
