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

/// Proposes `count` puts of key `key` (values prefix-0, prefix-1, ...) at the leader, retrying at
/// the hinted node on NotLeader; returns the values acknowledged.
std::vector<std::string> propose_many(Cluster& cluster, std::uint64_t partition, std::uint16_t leader, int count,
                                      const std::string& prefix, const std::string& key = "k") {
  std::vector<std::string> acknowledged;
  for (int i = 0; i < count; ++i) {
    const std::string value = fmt::format("{}-{}", prefix, i);
    auto answer = cluster.propose(leader, partition, put(key, value));
    if (!answer && answer.error().kind == pr::RaftErrorKind::NotLeader && answer.error().leader_hint != 0) {
      leader = static_cast<std::uint16_t>(answer.error().leader_hint);
      answer = cluster.propose(leader, partition, put(key, value));
    }
    if (answer) acknowledged.push_back(value);
  }
  return acknowledged;
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
  std::uint64_t last_index = 0;
  for (int i = 0; i < 30; ++i) {
    auto answer = cluster.propose(*leader, 2, put("k", fmt::format("v{}", i)));
    if (!answer) FAIL("proposal " << i << ": " << pr::to_string(answer.error()));
    CHECK(answer->index > last_index);  // answered in log order
    last_index = answer->index;
    // The state machine's response: the Put's version is its log index.
    CHECK(ap::decode_kv_response(answer->response).version == answer->index);
  }
  REQUIRE(cluster.all_applied(2, last_index));
  const auto expected = values(cluster, *leader, 2);
  REQUIRE(expected.size() == 30);
  for (int i = 0; i < 30; ++i) CHECK(expected[static_cast<std::size_t>(i)] == fmt::format("v{}", i));
  for (auto n : cluster.node_numbers()) CHECK(values(cluster, n, 2) == expected);
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
    CHECK(ap::decode_kv_response(read->response).value == value);
  }
}

TEST_CASE("partition actors: losing the leader's node elects a new leader and loses no acknowledged proposal",
          "[partition_actors]") {
  Cluster cluster;
  const auto first = cluster.leader(5);
  REQUIRE(first);
  auto before = propose_many(cluster, 5, *first, 20, "before");
  REQUIRE(before.size() == 20);
  cluster.stop(*first);
  const auto second = cluster.leader(5);
  REQUIRE(second);
  CHECK(*second != *first);
  auto after = propose_many(cluster, 5, *second, 20, "after");
  REQUIRE(after.size() == 20);
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
  std::vector<std::string> acknowledged;
  for (int i = 0; i < 60; ++i) {
    const std::string key = fmt::format("key{}", i % 10);
    auto answer = cluster.propose(*leader, 6, put(key, fmt::format("v{}", i)));
    REQUIRE(answer);
  }
  auto status = cluster.status(*leader, 6);
  REQUIRE(status);
  CHECK(status->snapshot_index >= 48);
  cluster.applied().forget(lagging);
  cluster.start(lagging);
  REQUIRE(cluster.connected(lagging));
  REQUIRE(cluster.all_applied(6, status->commit));
  CHECK(cluster.applied().restores(lagging, 6) >= 1);
  for (int k = 0; k < 10; ++k) {
    const std::string key = fmt::format("key{}", k);
    auto at_leader = cluster.read(*leader, 6, get(key), true);
    auto at_lagging = cluster.read(lagging, 6, get(key), true);
    REQUIRE(at_leader);
    REQUIRE(at_lagging);
    CHECK(ap::decode_kv_response(at_lagging->response) == ap::decode_kv_response(at_leader->response));
  }
}

TEST_CASE("partition actors: partitions elect and replicate independently of each other", "[partition_actors]") {
  Cluster cluster;
  constexpr std::uint64_t kPartitions = 8;
  std::map<std::uint64_t, std::uint16_t> leaders;
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
