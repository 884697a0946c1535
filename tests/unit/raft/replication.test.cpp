// Log replication: durable before counted, the Figure 8 commit rule, conflicting logs, fast
// backtracking, the in-flight window, append size and uncommitted-size limits.
#include <catch2/catch.hpp>

#include <algorithm>

#include "test_util.hpp"

using namespace elfin::raft;
using namespace elfin::raft::test;

namespace {

Message append(NodeId from, NodeId to, Term term, Index prev, Term prev_term, std::vector<Entry> entries,
               Index commit) {
  Message m;
  m.type = MessageType::Append;
  m.from = from;
  m.to = to;
  m.term = term;
  m.index = prev;
  m.log_term = prev_term;
  m.entries = std::move(entries);
  m.commit = commit;
  return m;
}

bool carries_index_from(const Message& m, Index index) {
  return std::any_of(m.entries.begin(), m.entries.end(), [&](const Entry& e) { return e.index >= index; });
}

}  // namespace

TEST_CASE("a proposal on a follower is refused with the leader as hint", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  ProposeResult r = cluster.node(2).propose({1});
  REQUIRE_FALSE(r);
  CHECK(r.error().error == ProposeError::NotLeader);
  CHECK(r.error().leader_hint == 1);
}

TEST_CASE("a follower acknowledges entries only after persisting them, and applies only durable entries", "[raft]") {
  Node follower(config(2), bootstrap({1, 2, 3}), nullptr);
  std::vector<Entry> entries{Entry{1, 1, EntryKind::Normal, {}}, Entry{1, 2, EntryKind::Normal, {7}}};
  follower.step(append(1, 2, 1, 0, 0, entries, 2));
  Ready ready = follower.ready();
  CHECK(ready.entries == entries);
  CHECK(ready.must_sync);
  CHECK(ready.messages.empty());
  REQUIRE(ready.messages_after_persist.size() == 1);
  CHECK(ready.messages_after_persist[0].type == MessageType::AppendResponse);
  CHECK(ready.messages_after_persist[0].index == 2);
  // Committed by the leader, but not durable here yet: not handed out.
  CHECK(follower.commit() == 2);
  CHECK(ready.committed.empty());
  CHECK_FALSE(follower.has_ready());
  follower.advance(ready.id);
  REQUIRE(follower.has_ready());
  Ready next = follower.ready();
  CHECK(next.committed == entries);
}

TEST_CASE("a leader counts its own entry only once the ready carrying it is advanced", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  // Followers never answer: only the leader's own copy could count, and one of three is no quorum.
  cluster.set_filter([](const Message& m) { return m.type == MessageType::AppendResponse; });
  auto index = cluster.propose(1);
  REQUIRE(index);
  cluster.settle();
  CHECK(cluster.node(1).persisted_index() == *index);
  CHECK(cluster.node(1).commit() < *index);
  SECTION("with one follower's durable acknowledgement it commits") {
    cluster.set_filter([](const Message& m) { return m.type == MessageType::AppendResponse && m.from == 3; });
    for (int k = 0; k < 3; ++k) {  // the lost acknowledgement is recovered through heartbeats
      cluster.tick(1);
      cluster.settle();
    }
    CHECK(cluster.node(1).commit() >= *index);
  }
}

TEST_CASE("Figure 8: an entry of an earlier term commits only through an entry of the current term", "[raft]") {
  sim::Options options = manual(5, false);
  options.config.check_quorum = false;
  options.config.max_bytes_per_append = 1;  // one entry per Append, so one can be held back
  sim::Cluster cluster(options);
  cluster.elect(1);
  // (a) 1 leads and gets its entry at index 2 only to 2.
  cluster.set_filter([](const Message& m) { return m.type == MessageType::Append && m.from == 1 && m.to > 2; });
  auto first = cluster.propose(1);
  REQUIRE(*first == 2);
  cluster.settle();
  const Term old_term = cluster.node(1).term();
  // (b) 1 crashes; 5 wins with 3 and 4 and appends its no-op at index 2 locally only.
  cluster.crash(1);
  cluster.set_filter([](const Message& m) { return m.type == MessageType::Append && m.from == 5; });
  cluster.elect(5);
  REQUIRE(cluster.node(5).role() == Role::Leader);
  CHECK(cluster.node(5).term_at(2) == cluster.node(5).term());
  // (c) 5 crashes, 1 comes back and leads again; index 2 (old term) reaches 3 and 4, a majority,
  // but its own no-op at index 3 is held back.
  cluster.crash(5);
  cluster.restart(1);
  // (The no-op's Append is let through once, to a follower lacking index 2: its rejection makes
  // the leader send index 2 alone.)
  cluster.set_filter([&](const Message& m) {
    return m.type == MessageType::Append && carries_index_from(m, 3) && cluster.alive(m.to) &&
           cluster.node(m.to).last_index() >= 2;
  });
  for (int k = 0; k < 5 && cluster.node(1).role() != Role::Leader; ++k) {
    cluster.elect(1);
  }
  REQUIRE(cluster.node(1).role() == Role::Leader);
  cluster.tick(1);
  cluster.settle();
  for (NodeId id : {1, 2, 3, 4}) {
    INFO("node " << id << " last " << cluster.node(id).last_index() << " term " << cluster.node(id).term());
    CHECK(cluster.node(id).term_at(2) == old_term);
  }
  CHECK(cluster.node(1).commit() == 1);  // replicated on a majority, yet not committed

  SECTION("(d) rightly so: the next leader may overwrite it") {
    cluster.crash(1);
    cluster.restart(5);
    cluster.set_filter(nullptr);
    for (int k = 0; k < 5 && cluster.node(5).role() != Role::Leader; ++k) {
      cluster.elect(5);
    }
    REQUIRE(cluster.node(5).role() == Role::Leader);
    cluster.tick(5);
    cluster.settle();
    CHECK(cluster.node(2).term_at(2) != old_term);
    CHECK(cluster.node(3).term_at(2) != old_term);
  }
  SECTION("(e) once the current term's entry is on a majority, both commit") {
    cluster.set_filter(nullptr);
    cluster.tick(1);
    cluster.settle();
    CHECK(cluster.node(1).commit() >= 3);
    CHECK(cluster.node(3).term_at(2) == old_term);
  }
  CHECK(cluster.failure() == "");
}

TEST_CASE("a deposed leader's uncommitted entries are overwritten by the new leader's log", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(1);
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  REQUIRE(cluster.node(1).last_index() == 6);
  cluster.partition({{2, 3}, {1}});
  REQUIRE(take_over(cluster, 2, {2, 3}));
  for (int k = 0; k < 3; ++k) {
    REQUIRE(cluster.propose(2));
  }
  cluster.settle();
  cluster.heal();
  for (int k = 0; k < 3; ++k) {
    cluster.tick(2);
    cluster.settle();
  }
  REQUIRE(cluster.node(1).last_index() == cluster.node(2).last_index());
  for (Index i = 1; i <= cluster.node(2).last_index(); ++i) {
    CHECK(cluster.node(1).term_at(i) == cluster.node(2).term_at(i));
  }
  CHECK(cluster.applied_ids(1) == cluster.applied_ids(2));
  CHECK(cluster.failure() == "");
}

TEST_CASE("fast backtracking repairs a long conflicting log in one round trip per term, not per entry", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.isolate(1);
  for (int k = 0; k < 50; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  cluster.partition({{2, 3}, {1}});
  REQUIRE(take_over(cluster, 2, {2, 3}));
  for (int k = 0; k < 50; ++k) {
    REQUIRE(cluster.propose(2));
  }
  cluster.settle();
  int rejections = 0;
  cluster.set_filter([&](const Message& m) {
    rejections += m.type == MessageType::AppendResponse && m.reject ? 1 : 0;
    return false;
  });
  cluster.heal();
  for (int k = 0; k < 3; ++k) {
    cluster.tick(2);
    cluster.settle();
  }
  CHECK(cluster.node(1).last_index() == cluster.node(2).last_index());
  CHECK(cluster.node(1).term_at(51) == cluster.node(2).term_at(51));
  CHECK(rejections <= 3);
  CHECK(cluster.failure() == "");
}

TEST_CASE("the in-flight window limits pipelined appends and acknowledgements reopen it", "[raft]") {
  sim::Options options = manual(3);
  options.config.max_inflight = 2;
  sim::Cluster cluster(options);
  cluster.elect(1);
  int appends_to_2 = 0;
  bool hold_acks = true;
  cluster.set_filter([&](const Message& m) {
    if (m.type == MessageType::Append && m.to == 2 && !m.entries.empty()) {
      ++appends_to_2;
    }
    return hold_acks && m.type == MessageType::AppendResponse && m.from == 2;
  });
  for (int k = 0; k < 10; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  CHECK(appends_to_2 == 2);  // the window, then nothing until an acknowledgement
  hold_acks = false;
  for (int k = 0; k < 3; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.node(2).last_index() == cluster.node(1).last_index());
}

TEST_CASE("max_bytes_per_append splits a backlog into several appends", "[raft]") {
  sim::Options options = manual(3);
  options.config.max_bytes_per_append = 300;
  sim::Cluster cluster(options);
  cluster.elect(1);
  cluster.isolate(3);
  for (int k = 0; k < 20; ++k) {
    REQUIRE(cluster.node(1).propose(Bytes(100, 1)));
  }
  cluster.settle();
  std::size_t largest = 0;
  int appends = 0;
  cluster.set_filter([&](const Message& m) {
    if (m.type == MessageType::Append && m.to == 3 && !m.entries.empty()) {
      largest = std::max(largest, m.entries.size());
      ++appends;
    }
    return false;
  });
  cluster.heal();
  for (int k = 0; k < 5; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.node(3).last_index() == cluster.node(1).last_index());
  CHECK(largest == 2);  // 2 x 124 bytes fit in 300, 3 do not
  CHECK(appends >= 10);
}

TEST_CASE("max_uncommitted_bytes drops proposals until entries commit", "[raft]") {
  sim::Options options = manual(3);
  options.config.max_uncommitted_bytes = 1000;
  sim::Cluster cluster(options);
  cluster.elect(1);
  cluster.isolate(1);
  int accepted = 0;
  ProposeResult last = Index{0};
  for (int k = 0; k < 20; ++k) {
    last = cluster.node(1).propose(Bytes(100, 1));
    if (!last) {
      break;
    }
    ++accepted;
  }
  REQUIRE_FALSE(last);
  CHECK(last.error().error == ProposeError::Dropped);
  CHECK(accepted == 8);  // 8 x 124 bytes fit in 1000
  cluster.heal();
  cluster.tick(1);
  cluster.settle();
  cluster.tick(1);
  cluster.settle();
  CHECK(cluster.node(1).propose(Bytes(100, 1)));
}

TEST_CASE("a follower whose appends were all lost catches up through heartbeat responses", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  cluster.set_filter([](const Message& m) { return m.type == MessageType::Append && m.to == 3; });
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  CHECK(cluster.node(3).last_index() < cluster.node(1).last_index());
  cluster.set_filter(nullptr);
  for (int k = 0; k < 4; ++k) {
    cluster.tick(1);
    cluster.settle();
  }
  CHECK(cluster.node(3).last_index() == cluster.node(1).last_index());
  CHECK(cluster.applied_ids(3) == cluster.applied_ids(1));
}

TEST_CASE("after report_unreachable a leader stops pipelining to that follower and probes", "[raft]") {
  sim::Cluster cluster(manual(3));
  cluster.elect(1);
  int appends_to_2 = 0;
  cluster.set_filter([&](const Message& m) {
    if (m.type == MessageType::Append && m.to == 2 && !m.entries.empty()) {
      ++appends_to_2;
      return true;
    }
    return false;
  });
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  CHECK(appends_to_2 == 5);  // pipelined, one per proposal
  cluster.node(1).report_unreachable(2);
  appends_to_2 = 0;
  for (int k = 0; k < 5; ++k) {
    REQUIRE(cluster.propose(1));
  }
  cluster.settle();
  CHECK(appends_to_2 == 1);  // one probe, then wait for an answer
}
