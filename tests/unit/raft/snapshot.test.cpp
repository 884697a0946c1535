// Snapshots: compaction, InstallSnapshot to a follower behind the compaction point, stale
// snapshots, lost snapshots, recovery from a snapshot.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

TEST_CASE("a follower behind the compaction point catches up through a snapshot, then through the log", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(3);
  for (int k = 0; k < 20; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.snapshot_and_compact(1, 0);
  REQUIRE(cluster.node(1).first_index() > cluster.node(3).last_index() + 1);
  cluster.heal();
  for (int k = 0; k < 3; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.sent(MessageType::InstallSnapshot) == 1);
  CHECK(cluster.storage(3).snapshot.has_value());
  CHECK(cluster.applied_ids(3) == cluster.applied_ids(1));
  // And then by log again.
  REQUIRE(cluster.propose(1));
  cluster.settle();
  cluster.tick(1);
  cluster.settle();
  CHECK(cluster.applied_ids(3) == cluster.applied_ids(1));
  CHECK(cluster.sent(MessageType::InstallSnapshot) == 1);
  CHECK(cluster.failure() == "");
}

TEST_CASE("a follower ignores a snapshot older than its commit index", "[raft]") {
  Node follower(config(2), bootstrap({1, 2, 3}), nullptr);
  std::vector<Entry> entries;
  for (Index i = 1; i <= 5; ++i) {
    entries.push_back(Entry{1, i, EntryKind::Normal, {}});
  }
  Message m;
  m.type = MessageType::Append;
  m.from = 1;
  m.to = 2;
  m.term = 1;
  m.entries = entries;
  m.commit = 5;
  follower.step(m);
  follower.advance(follower.ready().id);
  Message snap;
  snap.type = MessageType::InstallSnapshot;
  snap.from = 1;
  snap.to = 2;
  snap.term = 1;
  snap.snapshot = Snapshot{SnapshotMeta{3, 1, ConfState{{1, 2, 3}, {}, {}}}, {}};
  follower.step(snap);
  Ready ready = follower.ready();
  CHECK_FALSE(ready.snapshot);
  CHECK(follower.first_index() == 1);
  REQUIRE(ready.messages_after_persist.size() == 1);
  CHECK(ready.messages_after_persist[0].index == 5);
}

TEST_CASE("a lost snapshot is sent again after its timeout", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(3);
  for (int k = 0; k < 10; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.snapshot_and_compact(1, 0);
  cluster.heal();
  cluster.set_filter([](const Message& m) { return m.type == MessageType::InstallSnapshot; });
  for (int k = 0; k < 3; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.sent(MessageType::InstallSnapshot) == 1);
  cluster.set_filter(nullptr);
  for (int k = 0; k < 25; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.sent(MessageType::InstallSnapshot) == 2);
  CHECK(cluster.applied_ids(3) == cluster.applied_ids(1));
}

TEST_CASE("a restarted node recovers its state from its snapshot and log", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  for (int k = 0; k < 10; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.tick(1);
  cluster.settle();
  cluster.snapshot_and_compact(2, 3);
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.tick(1);
  cluster.settle();
  const auto before = cluster.applied_ids(2);
  REQUIRE(before.size() == 15);
  cluster.crash(2);
  cluster.restart(2);
  CHECK(cluster.node(2).first_index() > 1);
  CHECK(cluster.applied_ids(2) == before);  // snapshot + entries after it, re-applied
  CHECK(cluster.failure() == "");
}
