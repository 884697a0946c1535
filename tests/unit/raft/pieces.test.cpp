// The leader's per-follower flow control (src/progress.hpp, src/inflights.hpp), quorum
// arithmetic (src/quorum.hpp) and the conf change encoding.
#include <catch2/catch.hpp>

#include <map>

#include <elfin/raft/conf_change.hpp>

#include "progress.hpp"
#include "quorum.hpp"
#include "read_only.hpp"

using namespace elfin::raft;
using namespace elfin::raft::internal;

TEST_CASE("in-flight appends fill the window and an acknowledgement frees everything up to it", "[raft]") {
  Inflights window(3);
  window.add(5, 10);
  window.add(8, 10);
  window.add(9, 10);
  CHECK(window.full());
  window.free_le(7);
  CHECK(window.count() == 2);
  CHECK_FALSE(window.full());
  window.free_le(8);
  CHECK(window.count() == 1);
  window.add(12, 10);
  window.add(15, 10);  // wraps around the ring
  CHECK(window.full());
  window.free_first_one();
  CHECK(window.count() == 2);
  window.free_le(100);
  CHECK(window.count() == 0);
  CHECK(window.bytes() == 0);
}

TEST_CASE("a probing follower gets one append at a time, a replicating one a window, and stale rejections are ignored",
          "[raft]") {
  Progress pr(4);
  pr.next = 11;
  CHECK_FALSE(pr.paused());
  pr.probe_sent = true;
  CHECK(pr.paused());
  // A rejection of an older probe tells nothing.
  CHECK_FALSE(pr.maybe_decrease(7, 5));
  CHECK(pr.maybe_decrease(10, 6));
  CHECK(pr.next == 6);
  CHECK_FALSE(pr.paused());
  CHECK(pr.maybe_update(8));
  pr.become_replicate();
  CHECK(pr.next == 9);
  for (Index i = 9; i < 13; ++i) {
    pr.inflights.add(i, 1);
  }
  CHECK(pr.paused());
  // In replicate, a rejection at or below match is stale.
  CHECK_FALSE(pr.maybe_decrease(8, 1));
  pr.become_snapshot(50);
  CHECK(pr.paused());
  pr.become_probe();
  CHECK(pr.next == 51);
}

TEST_CASE("the commit index is what a majority reached, and a joint config needs both majorities", "[raft]") {
  std::map<NodeId, std::uint64_t> match{{1, 5}, {2, 9}, {3, 7}, {4, 1}, {5, 12}};
  auto of = [&](NodeId id) { return match[id]; };
  CHECK(quorum_value(ConfState{{1, 2, 3}, {}, {}}, of) == 7);
  CHECK(quorum_value(ConfState{{1, 2, 3, 4, 5}, {}, {}}, of) == 7);
  CHECK(quorum_value(ConfState{{1, 4}, {}, {}}, of) == 1);
  CHECK(quorum_value(ConfState{{2, 5, 3}, {}, {1, 4, 3}}, of) == 5);
  CHECK(quorum_value(ConfState{{}, {}, {}}, of) == 0);
}

TEST_CASE("an election is won by a majority of grants and lost once a majority denies", "[raft]") {
  std::map<NodeId, std::optional<bool>> votes{{1, true}, {2, std::nullopt}, {3, std::nullopt}};
  auto of = [&](NodeId id) { return votes[id]; };
  const ConfState three{{1, 2, 3}, {}, {}};
  CHECK(quorum_vote(three, of) == VoteResult::Pending);
  votes[2] = false;
  CHECK(quorum_vote(three, of) == VoteResult::Pending);
  votes[3] = true;
  CHECK(quorum_vote(three, of) == VoteResult::Won);
  votes[3] = false;
  CHECK(quorum_vote(three, of) == VoteResult::Lost);
  CHECK(quorum_vote(ConfState{{1}, {}, {}}, of) == VoteResult::Won);
  CHECK(quorum_vote(ConfState{{1, 3}, {}, {1, 2}}, of) == VoteResult::Lost);
}

TEST_CASE("a conf change round-trips with and without its resulting configuration", "[raft]") {
  const ConfChange change{ConfChangeKind::AddLearner, 42};
  CHECK(decode_conf_change(encode_conf_change(change)) == change);
  CHECK_FALSE(decode_conf_result(encode_conf_change(change)));
  const ConfState conf{{1, 2, 3}, {42}, {}};
  const Bytes data = encode_conf_change(change, conf);
  CHECK(decode_conf_change(data) == change);
  CHECK(decode_conf_result(data) == conf);
  CHECK_FALSE(decode_conf_change(Bytes{}));
  CHECK_FALSE(decode_conf_change(Bytes{9, 9, 9}));
  Bytes truncated = data;
  truncated.pop_back();
  CHECK_FALSE(decode_conf_result(truncated));
}

TEST_CASE("applying changes promotes learners, demotes voters and removes members", "[raft]") {
  ConfState conf{{1, 2, 3}, {}, {}};
  conf = apply_conf_change(conf, {ConfChangeKind::AddLearner, 4});
  CHECK(conf.learners == std::vector<NodeId>{4});
  conf = apply_conf_change(conf, {ConfChangeKind::AddVoter, 4});
  CHECK(conf.voters == std::vector<NodeId>{1, 2, 3, 4});
  CHECK(conf.learners.empty());
  conf = apply_conf_change(conf, {ConfChangeKind::AddLearner, 2});
  CHECK(conf.voters == std::vector<NodeId>{1, 3, 4});
  CHECK(conf.is_learner(2));
  conf = apply_conf_change(conf, {ConfChangeKind::RemoveNode, 2});
  CHECK_FALSE(conf.is_member(2));
}

TEST_CASE("reads are confirmed by a quorum echoing their round, oldest first, and all are handed back on step-down",
          "[raft]") {
  ReadOnly reads;
  const ConfState conf{{1, 2, 3, 4, 5}, {}, {}};
  const Bytes first = reads.add(10, {'a'}, 1);
  const Bytes second = reads.add(12, {'b'}, 2);
  CHECK(first != second);
  CHECK(reads.last_context() == second);
  CHECK(reads.ack(second, 3, 1, conf).empty());      // self and 3: two of five
  CHECK(reads.ack(second, 3, 1, conf).empty());      // the same ack twice counts once
  CHECK(reads.ack(Bytes{'x'}, 4, 1, conf).empty());  // not a round of ours
  // A quorum for the newer round confirms the older read too: it arrived before.
  auto released = reads.ack(second, 4, 1, conf);
  REQUIRE(released.size() == 2);
  CHECK(released[0].context == Bytes{'a'});
  CHECK(released[0].index == 10);
  CHECK(released[1].from == 2);
  CHECK(reads.empty());
  reads.add(20, {'c'}, 1);
  reads.wait_for_commit({'d'}, 3);
  auto all = reads.take_all();
  CHECK(all.size() == 2);
  CHECK(reads.empty());
}
