// The in-memory log (src/log.hpp): append, conflicts, hints, persistence marks, compaction.
#include <catch2/catch.hpp>

#include "log.hpp"

using namespace elfin::raft;
using elfin::raft::internal::RaftLog;

namespace {

Entry entry(Index index, Term term, std::size_t bytes = 0) {
  return Entry{term, index, EntryKind::Normal, Bytes(bytes, 1)};
}

RaftLog log_of(std::initializer_list<Term> terms) {
  RaftLog log;
  Index index = 1;
  for (Term t : terms) {
    log.append(entry(index++, t));
  }
  return log;
}

}  // namespace

TEST_CASE("the log appends after the last entry and knows the term at the compaction point", "[raft]") {
  RaftLog log = log_of({1, 1, 2});
  CHECK(log.first_index() == 1);
  CHECK(log.last_index() == 3);
  CHECK(log.last_term() == 2);
  CHECK(log.term(0) == Term{0});
  CHECK(log.term(3) == Term{2});
  CHECK_FALSE(log.term(4));
  log.compact(2);
  CHECK(log.first_index() == 3);
  CHECK(log.term(2) == Term{1});  // the compaction point
  CHECK_FALSE(log.term(1));
  CHECK(log.at(3).term == 2);
}

TEST_CASE("an append that conflicts truncates from the first conflicting entry and keeps the matching ones", "[raft]") {
  RaftLog log = log_of({1, 1, 1, 1});
  log.mark_all_durable();
  std::vector<Entry> incoming{entry(2, 1), entry(3, 2), entry(4, 2), entry(5, 2)};
  CHECK(log.append_after(1, std::move(incoming)) == 3);
  CHECK(log.last_index() == 5);
  CHECK(log.term(2) == Term{1});
  CHECK(log.term(3) == Term{2});
  // What was durable at and after the truncation point is not anymore.
  CHECK(log.persisted() == 2);
  SECTION("a duplicate append changes nothing") {
    std::vector<Entry> again{entry(3, 2), entry(4, 2)};
    CHECK(log.append_after(2, std::move(again)) == 0);
    CHECK(log.last_index() == 5);
  }
}

TEST_CASE("the conflict hint skips every entry whose term is above the leader's", "[raft]") {
  RaftLog log = log_of({1, 1, 2, 2, 2, 3, 3});
  CHECK(log.find_conflict_by_term(7, 2) == 5);
  CHECK(log.find_conflict_by_term(7, 1) == 2);
  CHECK(log.find_conflict_by_term(7, 0) == 0);
  CHECK(log.find_conflict_by_term(4, 5) == 4);
  CHECK(log.find_conflict_by_term(99, 3) == 7);
}

TEST_CASE("unstable entries are handed out once and a truncation hands out the replacements", "[raft]") {
  RaftLog log = log_of({1, 1});
  CHECK(log.take_unstable().size() == 2);
  CHECK_FALSE(log.has_unstable());
  log.append(entry(3, 1));
  auto next = log.take_unstable();
  REQUIRE(next.size() == 1);
  CHECK(next[0].index == 3);
  std::vector<Entry> incoming{entry(2, 2)};
  CHECK(log.append_after(1, std::move(incoming)) == 2);
  auto replaced = log.take_unstable();
  REQUIRE(replaced.size() == 1);
  CHECK(replaced[0].index == 2);
  CHECK(replaced[0].term == 2);
}

TEST_CASE("a slice stops before max bytes but always holds one entry", "[raft]") {
  RaftLog log;
  for (Index i = 1; i <= 10; ++i) {
    log.append(entry(i, 1, 100));
  }
  CHECK(log.slice(1, 1).size() == 1);
  CHECK(log.slice(1, 2 * entry_size(entry(1, 1, 100))).size() == 2);
  CHECK(log.slice(4, 1 << 20).size() == 7);
  CHECK(log.slice(11, 1 << 20).empty());
}

TEST_CASE("persistence marks never pass the last entry and a restore resets the log", "[raft]") {
  RaftLog log = log_of({1, 1, 1});
  log.persisted_up_to(10);
  CHECK(log.persisted() == 3);
  log.restore(20, 4);
  CHECK(log.first_index() == 21);
  CHECK(log.last_index() == 20);
  CHECK(log.last_term() == 4);
  CHECK(log.is_up_to_date(20, 4));
  CHECK_FALSE(log.is_up_to_date(25, 3));
  CHECK(log.is_up_to_date(1, 5));
}
