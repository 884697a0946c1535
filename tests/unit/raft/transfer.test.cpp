// Leadership transfer: TimeoutNow to an up-to-date voter, catching a lagging one up first,
// proposals refused meanwhile, abort after an election timeout.
#include <catch2/catch.hpp>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

TEST_CASE("leadership moves to an up-to-date follower in one election, past leader stickiness", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  const Term term = cluster.node(1).term();
  cluster.node(1).transfer_leadership(2);
  cluster.settle();
  CHECK(cluster.leader() == 2);
  CHECK(cluster.node(2).term() == term + 1);
  CHECK(cluster.node(1).role() == Role::Follower);
  CHECK(cluster.sent(MessageType::TimeoutNow) == 1);
  CHECK(cluster.failure() == "");
}

TEST_CASE("a transfer to a lagging follower first brings it up to date", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(3);
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.heal();
  cluster.node(1).transfer_leadership(3);
  cluster.settle();
  for (int k = 0; k < 3 && cluster.leader() != 3; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.leader() == 3);
  CHECK(cluster.applied_ids(3).size() == 5);
}

TEST_CASE("proposals are refused while a transfer runs, and the transfer aborts after an election timeout", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(2);
  cluster.node(1).transfer_leadership(2);
  CHECK(cluster.node(1).transferee() == 2);
  auto refused = cluster.node(1).propose({1});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().error == ProposeError::Dropped);
  for (int k = 0; k < 10; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.node(1).transferee() == 0);
  CHECK(cluster.node(1).role() == Role::Leader);
  CHECK(cluster.node(1).propose({1}));
}

TEST_CASE("a transfer to itself, a learner or a non-member is ignored", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.spawn(4);
  REQUIRE(cluster.node(1).propose_conf_change({ConfChangeKind::AddLearner, 4}));
  cluster.settle();
  for (NodeId to : {NodeId{1}, NodeId{4}, NodeId{9}}) {
    cluster.node(1).transfer_leadership(to);
    CHECK(cluster.node(1).transferee() == 0);
  }
  cluster.node(2).transfer_leadership(3);  // not the leader
  CHECK(cluster.node(2).transferee() == 0);
}
