// The checker on hand-written histories: what must pass, what must be found, and how it explains
// itself; pending operations; per-key partitioning; the budget.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <elfin/linearizability/checker.hpp>
#include <elfin/linearizability/kv_model.hpp>

namespace lin = elfin::linearizability;
using lin::KvInput;
using lin::KvOutput;
using History = lin::History<KvInput, KvOutput>;

namespace {

lin::CheckResult check(const History& h, lin::CheckOptions options = {}) {
  return lin::check(lin::KvModel{}, h, options);
}

}  // namespace

TEST_CASE("sequential puts and gets that agree are linearizable", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(3));
  h.add(1, 20, 30, KvInput::get("a"), KvOutput::found("x", 3));
  h.add(2, 40, 50, KvInput::put("a", "y"), KvOutput::ok(7));
  h.add(2, 60, 70, KvInput::get("a"), KvOutput::found("y", 7));
  h.add(1, 80, 90, KvInput::del("a"), KvOutput::ok());
  h.add(1, 100, 110, KvInput::get("a"), KvOutput::not_found());
  const auto result = check(h);
  INFO(result.summary());
  CHECK(result.verdict == lin::Verdict::Ok);
  CHECK(result.keys == 1);
  CHECK(result.operations == 6);
}

TEST_CASE("a read concurrent with a write may see the old or the new value", "[linearizability]") {
  for (const auto& seen : {KvOutput::found("old", 1), KvOutput::found("new", 2)}) {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "old"), KvOutput::ok(1));
    h.add(1, 20, 60, KvInput::put("a", "new"), KvOutput::ok(2));
    h.add(2, 30, 40, KvInput::get("a"), seen);
    CHECK(check(h).ok());
  }
}

TEST_CASE("a read overlapping a write by one instant counts as concurrent (closed intervals)", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(1));
  h.add(2, 10, 20, KvInput::get("a"), KvOutput::not_found());  // invoked as the put completed
  CHECK(check(h).ok());
}

TEST_CASE("a stale read is a violation, explained with the key and the operations involved", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(1));
  h.add(1, 20, 30, KvInput::put("a", "y"), KvOutput::ok(2));
  h.add(2, 40, 50, KvInput::get("a"), KvOutput::found("x", 1));
  h.add(3, 0, 50, KvInput::put("b", "z"), KvOutput::ok(1));  // another key, fine
  const auto result = check(h);
  REQUIRE(result.verdict == lin::Verdict::Violation);
  REQUIRE(result.violations.size() == 1);
  const lin::Violation& v = result.violations.front();
  CHECK(v.key == "a");
  CHECK(v.blocked.index == 2);
  CHECK(v.blocked.what == "get -> found 'x' v1");
  CHECK(v.linearized_count == 2);
  REQUIRE(v.linearized.size() == 2);
  CHECK(v.linearized[1].what == "put 'y' -> ok v2");
  CHECK(v.state == "'y' v2");
  const std::string text = result.summary();
  CHECK(text.find("key `a`") != std::string::npos);
  CHECK(text.find("#2 client 2 [40, 50] get -> found 'x' v1") != std::string::npos);
}

TEST_CASE("a lost write is a violation", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(1));
  h.add(2, 20, 30, KvInput::get("a"), KvOutput::not_found());
  CHECK(check(h).verdict == lin::Verdict::Violation);
}

TEST_CASE("a read of a value nobody wrote is a violation", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(1));
  h.add(2, 5, 30, KvInput::get("a"), KvOutput::found("never", 1));
  const auto result = check(h);
  REQUIRE(result.verdict == lin::Verdict::Violation);
  CHECK(result.violations.front().linearized_count <= 1);
}

TEST_CASE("versions only grow and name one value each", "[linearizability]") {
  SECTION("a later write with a smaller version") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(5));
    h.add(1, 20, 30, KvInput::put("a", "y"), KvOutput::ok(3));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("one version seen with two values") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(5));
    h.add(2, 0, 40, KvInput::put("a", "y"), KvOutput::ok(6));
    h.add(3, 50, 60, KvInput::get("a"), KvOutput::found("y", 5));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("re-created after a delete, a key's version is above the one it had") {
    History ok;
    ok.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(5));
    ok.add(1, 20, 30, KvInput::del("a"), KvOutput::ok());
    ok.add(1, 40, 50, KvInput::put("a", "y"), KvOutput::ok(9));
    CHECK(check(ok).ok());
    History bad = ok;
    bad.operations[2].output = KvOutput::ok(4);
    CHECK(check(bad).verdict == lin::Verdict::Violation);
  }
  SECTION("gaps between versions are fine") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(1));
    h.add(1, 20, 30, KvInput::put("a", "y"), KvOutput::ok(1000));
    CHECK(check(h).ok());
  }
}

TEST_CASE("compare-and-set: one of two racing CAS on one version wins", "[linearizability]") {
  History base;
  base.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(4));
  SECTION("one wins, the other sees the winner: fine") {
    History h = base;
    h.add(2, 20, 40, KvInput::cas("a", 4, "p"), KvOutput::ok(5));
    h.add(3, 20, 40, KvInput::cas("a", 4, "q"), KvOutput::mismatch("p", 5));
    CHECK(check(h).ok());
  }
  SECTION("both win: a violation") {
    History h = base;
    h.add(2, 20, 40, KvInput::cas("a", 4, "p"), KvOutput::ok(5));
    h.add(3, 20, 40, KvInput::cas("a", 4, "q"), KvOutput::ok(6));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("a mismatch reporting the very version expected: a violation") {
    History h = base;
    h.add(2, 20, 40, KvInput::cas("a", 4, "p"), KvOutput::mismatch("x", 4));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("create-if-absent on an existing key that succeeds: a violation") {
    History h = base;
    h.add(2, 20, 40, KvInput::cas("a", 0, "p"), KvOutput::ok(5));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("create-if-absent on an absent key") {
    History h;
    h.add(2, 20, 40, KvInput::cas("a", 0, "p"), KvOutput::ok(1));
    h.add(2, 50, 60, KvInput::cas("a", 0, "q"), KvOutput::mismatch("p", 1));
    CHECK(check(h).ok());
  }
}

TEST_CASE("delete-if-version deletes only at that version", "[linearizability]") {
  History h;
  h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(4));
  h.add(1, 20, 30, KvInput::delete_if_version("a", 3), KvOutput::mismatch("x", 4));
  h.add(1, 40, 50, KvInput::delete_if_version("a", 4), KvOutput::ok());
  h.add(1, 60, 70, KvInput::delete_if_version("a", 4), KvOutput::mismatch({}, 0));
  h.add(1, 80, 90, KvInput::get("a"), KvOutput::not_found());
  CHECK(check(h).ok());
  History bad = h;
  bad.operations[2].input.expected_version = 3;  // deleted at a version it does not have
  CHECK(check(bad).verdict == lin::Verdict::Violation);
}

TEST_CASE("a pending write may take effect after its invocation, or never", "[linearizability]") {
  SECTION("observed later: fine, and its unobserved version is pinned by the observation") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(2));
    h.add_pending(2, 20, KvInput::put("a", "y"));
    h.add(3, 100, 110, KvInput::get("a"), KvOutput::found("y", 7));
    h.add(3, 120, 130, KvInput::put("a", "z"), KvOutput::ok(8));
    CHECK(check(h).ok());
  }
  SECTION("never observed: fine") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(2));
    h.add_pending(2, 20, KvInput::put("a", "y"));
    h.add(3, 100, 110, KvInput::get("a"), KvOutput::found("x", 2));
    CHECK(check(h).ok());
  }
  SECTION("observed with a version not above the previous one: a violation") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(2));
    h.add_pending(2, 20, KvInput::put("a", "y"));
    h.add(3, 100, 110, KvInput::get("a"), KvOutput::found("y", 2));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("observed before it was invoked: a violation") {
    History h;
    h.add(3, 0, 10, KvInput::get("a"), KvOutput::found("y", 1));
    h.add_pending(2, 20, KvInput::put("a", "y"));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("observed, then overwritten, then observed again: a violation") {
    History h;
    h.add_pending(2, 0, KvInput::put("a", "y"));
    h.add(3, 10, 20, KvInput::get("a"), KvOutput::found("y", 3));
    h.add(3, 30, 40, KvInput::put("a", "z"), KvOutput::ok(4));
    h.add(3, 50, 60, KvInput::get("a"), KvOutput::found("y", 3));
    CHECK(check(h).verdict == lin::Verdict::Violation);
  }
  SECTION("a pending compare-and-set that took effect") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(2));
    h.add_pending(2, 20, KvInput::cas("a", 2, "y"));
    h.add(3, 100, 110, KvInput::get("a"), KvOutput::found("y", 5));
    CHECK(check(h).ok());
  }
  SECTION("a pending delete that took effect") {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "x"), KvOutput::ok(2));
    h.add_pending(2, 20, KvInput::del("a"));
    h.add(3, 100, 110, KvInput::get("a"), KvOutput::not_found());
    CHECK(check(h).ok());
  }
}

TEST_CASE("unanswered operations that never took effect do not multiply the search", "[linearizability]") {
  // The shape of a key's history from a run where a node crashed with many writes: most of them
  // never took effect, one delete did, long after it was sent. Placing each unanswered write as
  // early as it may be leads the search into a dead end at the last answer, and back through
  // every subset of them placed before it (millions of steps); the search that places none of
  // them, then one, finds the order in under two thousand.
  const auto history = [](std::uint64_t lost_writes) {
    History h;
    h.add(1, 0, 10, KvInput::put("a", "first"), KvOutput::ok(4));
    h.add_pending(2, 100, KvInput::del("a"));
    h.add_pending(3, 120, KvInput::del("a"));
    for (std::uint64_t i = 0; i < lost_writes; ++i) {
      h.add_pending(10 + i, static_cast<lin::Time>(150 + 10 * i), KvInput::put("a", "lost" + std::to_string(i)));
    }
    h.add_pending(4, 300, KvInput::cas("a", 0, "created"));
    h.add(5, 400, 410, KvInput::cas("a", 0, "again"), KvOutput::mismatch("first", 4));
    h.add(6, 405, 420, KvInput::put("a", "second"), KvOutput::ok(17));
    // Absent: one of the deletes took effect after the put above.
    h.add(7, 800, 810, KvInput::cas("a", 75, "late"), KvOutput::mismatch({}, 0));
    return h;
  };
  const auto result = check(history(11), {.max_steps_per_key = 20'000});
  INFO(result.summary());
  CHECK(result.verdict == lin::Verdict::Ok);
  CHECK(result.pending == 14);

  SECTION("and a violation among them is still found, by the search that may place them all") {
    // Proving that no subset of the unanswered operations explains an answer takes the whole
    // search: a few of them here.
    History h = history(3);
    h.add(8, 900, 910, KvInput::get("a"), KvOutput::found("lost1", 2));  // below the version 17 seen before
    const auto violating = check(h, {.max_steps_per_key = 20'000});
    INFO(violating.summary());
    CHECK(violating.verdict == lin::Verdict::Violation);
  }
}

TEST_CASE("keys are checked apart: a violation names its key only", "[linearizability]") {
  History h;
  for (int k = 0; k < 20; ++k) {
    const std::string key = "key" + std::to_string(k);
    h.add(1, 0, 10, KvInput::put(key, "x"), KvOutput::ok(1));
    h.add(2, 20, 30, KvInput::get(key), k == 13 ? KvOutput::not_found() : KvOutput::found("x", 1));
  }
  for (unsigned threads : {1u, 4u}) {
    const auto result = check(h, {.threads = threads});
    CHECK(result.keys == 20);
    REQUIRE(result.violations.size() == 1);
    CHECK(result.violations.front().key == "key13");
    CHECK(result.unknown_keys.empty());
  }
}

TEST_CASE("a search over its budget answers unknown instead of running on", "[linearizability]") {
  // Forty writes of one key all pending, then a read of a value none wrote: proving that no
  // subset and order of the pending writes explains it means exploring every subset.
  History h;
  for (std::uint64_t i = 0; i < 40; ++i) h.add_pending(i + 1, 0, KvInput::put("a", std::to_string(i)));
  h.add(100, 10, 20, KvInput::get("a"), KvOutput::found("nobody", 1));
  const auto limited = check(h, {.max_steps_per_key = 10'000});
  CHECK(limited.verdict == lin::Verdict::Unknown);
  REQUIRE(limited.unknown_keys.size() == 1);
  CHECK(limited.unknown_keys.front() == "a");
  const auto timed = check(h, {.max_steps_per_key = UINT64_MAX, .timeout = std::chrono::milliseconds(20)});
  CHECK(timed.verdict == lin::Verdict::Unknown);
}

TEST_CASE("a malformed history is refused", "[linearizability]") {
  History h;
  h.add(1, 50, 10, KvInput::get("a"), KvOutput::not_found());
  CHECK_THROWS_AS(check(h), std::invalid_argument);
}
