// Single-server membership changes: learners, promotion, removal (the leader too), one pending
// change at a time, and a change across a leader loss.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

namespace {

void settle_ticks(sim::Cluster& cluster, NodeId leader, int ticks) {
  for (int k = 0; k < ticks; ++k) {
    cluster.tick(leader);
    cluster.settle();
  }
}

}  // namespace

TEST_CASE("a learner receives the log but neither counts toward commit nor campaigns", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.spawn(4);
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 4}));
  cluster.settle();
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).conf().is_learner(4));
  CHECK(cluster.node(4).conf().is_learner(4));  // learned from the entry, with the whole membership
  CHECK(cluster.node(4).conf().voters == std::vector<NodeId>{1, 2, 3});
  REQUIRE(cluster.propose(1));
  settle_ticks(cluster, 1, 1);
  CHECK(cluster.applied_ids(4) == cluster.applied_ids(1));
  // With both voting followers silent, the learner's acknowledgement does not make a quorum.
  cluster.set_filter(
      [](const Message& m) { return m.type == MessageType::AppendResponse && (m.from == 2 || m.from == 3); });
  auto index = cluster.propose(1);
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(4).last_index() >= *index);
  CHECK(cluster.node(1).commit() < *index);
  // And it never campaigns.
  for (int k = 0; k < 50; ++k) {
    cluster.tick(4);
  }
  cluster.settle();
  CHECK(cluster.node(4).role() == Role::Follower);
}

TEST_CASE("a learner promoted by AddVoter counts toward the quorum", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.spawn(4);
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 4}));
  settle_ticks(cluster, 1, 2);
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::AddVoter, 4}));
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).conf().voters == std::vector<NodeId>{1, 2, 3, 4});
  CHECK(cluster.node(4).conf().is_voter(4));
  // Four voters: 1 and 4 alone are no quorum, 1, 2 and 4 are.
  cluster.set_filter(
      [](const Message& m) { return m.type == MessageType::AppendResponse && (m.from == 2 || m.from == 3); });
  auto index = cluster.propose(1);
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).commit() < *index);
  cluster.set_filter([](const Message& m) { return m.type == MessageType::AppendResponse && m.from == 3; });
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).commit() >= *index);
  CHECK(cluster.failure() == "");
}

TEST_CASE("only one membership change may be pending, and changes that make no sense are refused", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(1);  // nothing commits
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 4}));
  auto second = cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 5});
  REQUIRE_FALSE(second);
  CHECK(second.error().error == ProposeError::Dropped);
  cluster.heal();
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 5}));
  settle_ticks(cluster, 1, 2);
  for (ConfChange bad : {ConfChange{ConfChangeKind::AddVoter, 2}, ConfChange{ConfChangeKind::RemoveNode, 9},
                         ConfChange{ConfChangeKind::AddLearner, 5}, ConfChange{ConfChangeKind::AddVoter, 0}}) {
    auto r = cluster.node(1).propose_conf_change(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().error == ProposeError::Invalid);
  }
  CHECK(cluster.node(2).propose_conf_change({ConfChangeKind::AddLearner, 6}).error().error == ProposeError::NotLeader);
}

TEST_CASE("removing a node lets pending entries commit under the smaller quorum", "[raft]") {
  sim::Cluster cluster(manual(4));
  cluster.elect(1);
  // 3 and 4 are gone: with 4 voters, 1 and 2 are no quorum.
  cluster.crash(3);
  cluster.crash(4);
  auto remove = cluster.node(1).propose_conf_change({ConfChangeKind::RemoveNode, 4});
  REQUIRE(remove);
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).commit() < *remove);
  // Node 3 returns: the removal commits; now 1 and 2 are a quorum of {1, 2, 3}.
  cluster.restart(3);
  settle_ticks(cluster, 1, 3);
  REQUIRE(cluster.node(1).conf().voters == std::vector<NodeId>{1, 2, 3});
  cluster.crash(3);
  auto entry = cluster.propose(1);
  settle_ticks(cluster, 1, 2);
  CHECK(cluster.node(1).commit() >= *entry);
  CHECK(cluster.failure() == "");
}

TEST_CASE("a removed leader steps down once its removal commits and the others elect a new leader", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::RemoveNode, 1}));
  cluster.settle();
  settle_ticks(cluster, 1, 1);
  CHECK(cluster.node(1).role() == Role::Follower);
  CHECK_FALSE(cluster.node(1).conf().is_member(1));
  NodeId leader = 0;
  for (int k = 0; k < 60 && leader == 0; ++k) {
    cluster.tick_all();
    cluster.settle();
    leader = cluster.leader();
  }
  REQUIRE((leader == 2 || leader == 3));
  // The removed node never campaigns again.
  CHECK(cluster.node(1).role() == Role::Follower);
  REQUIRE(cluster.propose(leader));
  cluster.settle();
  CHECK(cluster.failure() == "");
}

TEST_CASE("a membership change during leader loss: the next leader accepts no new change before committing in its term",
          "[raft]") {
  sim::Cluster cluster(manual(3, false));
  cluster.elect(1);
  // 1 appends a removal of 3 that reaches only 2, then crashes.
  cluster.set_filter([](const Message& m) {
    return (m.type == MessageType::Append && m.from == 1 && m.to == 3) ||
           (m.type == MessageType::AppendResponse && m.from == 2);
  });
  auto change = cluster.node(1).propose_conf_change({ConfChangeKind::RemoveNode, 3});
  REQUIRE(change);
  cluster.settle();
  cluster.crash(1);
  REQUIRE(take_over(cluster, 2, {2, 3}, [](const Message& m) { return m.type == MessageType::Append && m.from == 2; }));
  // 2 holds the old change uncommitted: a new change now could form disjoint majorities.
  auto early = cluster.node(2).propose_conf_change({ConfChangeKind::AddLearner, 5});
  REQUIRE_FALSE(early);
  CHECK(early.error().error == ProposeError::Dropped);
  cluster.set_filter(nullptr);
  settle_ticks(cluster, 2, 2);
  // Its no-op committed the old change with it: 3 is out, and changes are accepted again.
  CHECK(cluster.node(2).conf().voters == std::vector<NodeId>{1, 2});
  CHECK(cluster.node(2).propose_conf_change({ConfChangeKind::AddLearner, 5}));
  CHECK(cluster.failure() == "");
}
