// Leader election: randomized timeouts, votes counted once durable, split votes, pre-vote,
// check-quorum and leader stickiness, stale leaders.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

TEST_CASE("a lone voter elects itself once its vote is durable and then commits its no-op", "[raft]") {
  Node node(config(1), bootstrap({1}), nullptr);
  node.campaign();
  REQUIRE(node.has_ready());
  Ready first = node.ready();
  // The new term and the self-vote are in this ready; nothing counts before it is durable.
  REQUIRE(first.hard_state);
  CHECK(first.hard_state->term == 1);
  CHECK(first.hard_state->vote == 1);
  CHECK(first.must_sync);
  CHECK(node.role() == Role::Candidate);
  node.advance(first.id);
  CHECK(node.role() == Role::Leader);
  Ready second = node.ready();
  REQUIRE(second.entries.size() == 1);  // the no-op
  CHECK(second.entries[0].data.empty());
  CHECK(second.committed.empty());  // not durable yet: not committed
  CHECK(node.commit() == 0);
  node.advance(second.id);
  CHECK(node.commit() == 1);
  Ready third = node.ready();
  REQUIRE(third.committed.size() == 1);
  CHECK(third.committed[0].index == 1);
}

TEST_CASE("election timeouts are randomized from e up to 2e ticks and the same seed gives the same timeout", "[raft]") {
  std::set<int> seen;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    int timeouts[2] = {0, 0};
    for (int& ticks : timeouts) {
      Config c = config(2);
      c.seed = seed;
      Node node(c, bootstrap({1, 2, 3}), nullptr);
      while (node.role() == Role::Follower && ticks < 100) {
        node.tick();
        ++ticks;
      }
    }
    CHECK(timeouts[0] == timeouts[1]);
    CHECK(timeouts[0] >= 10);
    CHECK(timeouts[0] < 20);
    seen.insert(timeouts[0]);
  }
  CHECK(seen.size() > 3);  // actually random
}

TEST_CASE("the first node to time out wins and every node agrees on the leader and term", "[raft]") {
  sim::Cluster cluster(manual(5));
  const NodeId leader = elect_by_ticks(cluster);
  REQUIRE(leader != 0);
  cluster.settle();
  for (NodeId id : cluster.ids()) {
    CHECK(cluster.node(id).leader() == leader);
    CHECK(cluster.node(id).term() == cluster.node(leader).term());
  }
  CHECK(cluster.failure() == "");
}

TEST_CASE("split votes: two candidates in one term yield no second leader, and a later election succeeds", "[raft]") {
  sim::Cluster cluster(manual(4, false));
  // 1 and 2 campaign at once; 3 votes for 1 and 4 for 2: 2 votes each of 4, no majority.
  cluster.set_filter([](const Message& m) {
    return m.type == MessageType::Vote && ((m.from == 1 && m.to == 4) || (m.from == 2 && m.to == 3));
  });
  cluster.node(1).campaign();
  cluster.node(2).campaign();
  cluster.settle();
  CHECK(cluster.leader() == 0);
  CHECK(cluster.node(1).term() == 1);
  CHECK(cluster.node(2).term() == 1);
  cluster.set_filter(nullptr);
  const NodeId leader = elect_by_ticks(cluster);
  CHECK(leader != 0);
  CHECK(cluster.node(leader).term() >= 2);
  CHECK(cluster.failure() == "");
}

TEST_CASE("a node votes at most once per term and denies a candidate with a less up-to-date log", "[raft]") {
  Node voter(config(3), bootstrap({1, 2, 3}), nullptr);
  const auto vote_request = [](NodeId from, Term term, Index index, Term log_term) {
    Message m;
    m.type = MessageType::Vote;
    m.from = from;
    m.to = 3;
    m.term = term;
    m.index = index;
    m.log_term = log_term;
    return m;
  };
  voter.step(vote_request(1, 2, 0, 0));
  Ready r1 = voter.ready();
  REQUIRE(r1.messages_after_persist.size() == 1);  // a vote leaves only once durable
  CHECK(r1.messages.empty());
  CHECK_FALSE(r1.messages_after_persist[0].reject);
  REQUIRE(r1.hard_state);
  CHECK(r1.hard_state->vote == 1);
  voter.advance(r1.id);
  voter.step(vote_request(2, 2, 0, 0));
  Ready r2 = voter.ready();
  REQUIRE(r2.messages_after_persist.size() == 1);
  CHECK(r2.messages_after_persist[0].reject);  // already voted for 1 in term 2
  voter.step(vote_request(1, 2, 0, 0));
  Ready r3 = voter.ready();
  REQUIRE(r3.messages_after_persist.size() == 1);
  CHECK_FALSE(r3.messages_after_persist[0].reject);  // the same candidate again: yes

  // A voter with a longer log denies a candidate whose log is behind.
  Recovered recovered = bootstrap({1, 2, 3});
  recovered.hard_state.term = 3;
  recovered.entries = {Entry{3, 1, EntryKind::Normal, {}}, Entry{3, 2, EntryKind::Normal, {}}};
  Node ahead(config(3), std::move(recovered), nullptr);
  ahead.step(vote_request(1, 4, 1, 3));
  Ready r4 = ahead.ready();
  REQUIRE(r4.messages_after_persist.size() == 1);
  CHECK(r4.messages_after_persist[0].reject);
}

TEST_CASE("a restarted node remembers its vote and denies another candidate of that term", "[raft]") {
  sim::Cluster cluster(manual(3, false));
  // 3 votes for 1 in term 1 (1's vote to 2 is lost), then 3 crashes and restarts.
  cluster.set_filter([](const Message& m) { return m.to == 2 || m.from == 2; });
  cluster.node(1).campaign();
  cluster.settle();
  REQUIRE(cluster.node(1).role() == Role::Leader);
  cluster.crash(3);
  cluster.restart(3);
  CHECK(cluster.node(3).term() == 1);
  CHECK(cluster.node(3).vote() == 1);
  cluster.set_filter(nullptr);
  // Node 2 campaigns in term 1 (it never heard of term 1 being used): 3 must deny.
  Message request;
  request.type = MessageType::Vote;
  request.from = 2;
  request.to = 3;
  request.term = 1;
  request.index = 10;
  request.log_term = 1;
  cluster.node(3).step(request);
  Ready ready = cluster.node(3).ready();
  REQUIRE(ready.messages_after_persist.size() == 1);
  CHECK(ready.messages_after_persist[0].reject);
}

TEST_CASE("pre-vote: a partitioned node that rejoins neither raises terms nor disrupts the leader", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  REQUIRE(cluster.leader() == 1);
  const Term term = cluster.node(1).term();
  cluster.isolate(3);
  for (int k = 0; k < 100; ++k) {
    cluster.tick_all();
    cluster.settle();
  }
  // It kept pre-campaigning, never winning: its term did not move.
  CHECK(cluster.node(3).term() == term);
  CHECK(cluster.node(3).role() == Role::PreCandidate);
  cluster.heal();
  for (int k = 0; k < 30; ++k) {
    cluster.tick_all();
    cluster.settle();
  }
  CHECK(cluster.leader() == 1);
  CHECK(cluster.node(1).term() == term);
  CHECK(cluster.node(3).leader() == 1);
  CHECK(cluster.failure() == "");
}

TEST_CASE("without pre-vote a partitioned node's higher term deposes the leader when it rejoins", "[raft]") {
  sim::Cluster cluster(manual(3, false));
  cluster.elect(1);
  const Term term = cluster.node(1).term();
  cluster.isolate(3);
  for (int k = 0; k < 100; ++k) {
    cluster.tick_all();
    cluster.settle();
  }
  CHECK(cluster.node(3).term() > term + 2);
  cluster.heal();
  // The leader's next heartbeat to 3 is answered at 3's higher term: the leader steps down.
  cluster.tick(1);
  cluster.settle();
  CHECK(cluster.node(1).term() > term + 2);
  CHECK(cluster.node(1).role() != Role::Leader);
}

TEST_CASE("check-quorum: a leader cut off from a quorum steps down within two election timeouts", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(1);
  int ticks = 0;
  while (cluster.node(1).role() == Role::Leader && ticks < 100) {
    cluster.tick(1);
    cluster.settle();
    ++ticks;
  }
  CHECK(cluster.node(1).role() == Role::Follower);
  CHECK(ticks <= 20);
  SECTION("and keeps leading while a quorum answers") {
    cluster.heal();
    cluster.elect(2);
    REQUIRE(cluster.leader() == 2);
    cluster.isolate(3);
    for (int k = 0; k < 60; ++k) {
      cluster.tick(2);
      cluster.tick(1);
      cluster.settle();
    }
    CHECK(cluster.node(2).role() == Role::Leader);
  }
}

TEST_CASE("leader stickiness: followers that hear from the leader ignore a vote request", "[raft]") {
  sim::Cluster cluster(manual(3, false));
  cluster.elect(1);
  const Term term = cluster.node(1).term();
  // Node 3 campaigns on its own (as after a long pause): 2 heard from 1 recently and ignores it.
  cluster.node(3).campaign();
  cluster.settle();
  CHECK(cluster.node(2).term() == term);
  CHECK(cluster.node(2).leader() == 1);
  CHECK(cluster.node(1).role() == Role::Leader);
  CHECK(cluster.node(3).role() == Role::Candidate);
}

TEST_CASE("a stale leader's appends are refused and it steps down on seeing the newer term", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(1);
  // The majority elects 2 while 1 still believes it leads.
  for (int k = 0; k < 40 && cluster.node(2).role() != Role::Leader && cluster.node(3).role() != Role::Leader; ++k) {
    cluster.tick(2);
    cluster.tick(3);
    cluster.settle();
  }
  const NodeId new_leader = cluster.node(2).role() == Role::Leader ? 2 : 3;
  REQUIRE(cluster.node(new_leader).role() == Role::Leader);
  REQUIRE(cluster.node(1).role() == Role::Leader);
  auto stale = cluster.propose(1);
  REQUIRE(stale);
  const Index stale_index = *stale;
  const Term stale_term = cluster.node(1).term();
  cluster.heal();
  cluster.tick(1);
  cluster.settle();
  CHECK(cluster.node(1).role() == Role::Follower);
  CHECK(cluster.node(1).term() == cluster.node(new_leader).term());
  // Its proposal never commits: the new leader's entry took that index.
  cluster.tick(new_leader);
  cluster.settle();
  for (NodeId id : cluster.ids()) {
    CHECK(cluster.node(id).term_at(stale_index) != stale_term);
  }
  CHECK(cluster.failure() == "");
}
