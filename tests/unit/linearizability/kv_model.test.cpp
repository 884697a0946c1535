// The versioned register's step rules one by one (the checker's tests use them through histories).
#include <catch2/catch.hpp>

#include <elfin/linearizability/kv_model.hpp>

namespace lin = elfin::linearizability;
using lin::KvInput;
using lin::KvOutput;
using lin::KvState;

namespace {
const lin::KvModel model;
KvState at(std::string value, std::uint64_t version) { return {true, std::move(value), version, true}; }
}  // namespace

TEST_CASE("kv model: a write's version must be above the key's current one", "[linearizability]") {
  CHECK(model.step(at("x", 5), KvInput::put("k", "y"), KvOutput::ok(6)) == std::vector{at("y", 6)});
  CHECK(model.step(at("x", 5), KvInput::put("k", "y"), KvOutput::ok(5)).empty());
  CHECK(model.step(at("x", 5), KvInput::cas("k", 5, "y"), KvOutput::ok(9)) == std::vector{at("y", 9)});
  CHECK(model.step(at("x", 5), KvInput::cas("k", 5, "y"), KvOutput::ok(5)).empty());
}

TEST_CASE("kv model: an unobserved write leaves the version unknown above the floor until observed",
          "[linearizability]") {
  const auto after = model.step(at("x", 5), KvInput::put("k", "y"), std::nullopt);
  REQUIRE(after.size() == 1);
  CHECK(after[0] == KvState{true, "y", 5, false});
  CHECK(model.step(after[0], KvInput::get("k"), KvOutput::found("y", 5)).empty());
  CHECK(model.step(after[0], KvInput::get("k"), KvOutput::found("y", 6)) == std::vector{at("y", 6)});
  // A cas may match the unknown version, which pins it.
  CHECK(model.step(after[0], KvInput::cas("k", 8, "z"), KvOutput::ok(9)) == std::vector{at("z", 9)});
  CHECK(model.step(after[0], KvInput::cas("k", 5, "z"), KvOutput::ok(9)).empty());
}

TEST_CASE("kv model: a delete keeps the floor for the next write", "[linearizability]") {
  const auto gone = model.step(at("x", 5), KvInput::del("k"), KvOutput::ok());
  REQUIRE(gone.size() == 1);
  CHECK_FALSE(gone[0].exists);
  CHECK(model.step(gone[0], KvInput::get("k"), KvOutput::not_found()) == gone);
  CHECK(model.step(gone[0], KvInput::put("k", "y"), KvOutput::ok(5)).empty());
  CHECK(model.step(gone[0], KvInput::put("k", "y"), KvOutput::ok(6)).size() == 1);
  CHECK(model.step(gone[0], KvInput::del("k"), KvOutput::ok()).empty());
  CHECK(model.step(gone[0], KvInput::cas("k", 5, "y"), KvOutput::mismatch({}, 0)) == gone);
}

TEST_CASE("kv model: a mismatch that reports only the current version accepts any value, never another version",
          "[linearizability]") {
  CHECK(model.step(at("x", 5), KvInput::cas("k", 4, "y"), KvOutput::mismatch_version(5)) == std::vector{at("x", 5)});
  CHECK(model.step(at("x", 5), KvInput::cas("k", 4, "y"), KvOutput::mismatch_version(6)).empty());
  CHECK(model.step(at("x", 5), KvInput::delete_if_version("k", 4), KvOutput::mismatch_version(5)) ==
        std::vector{at("x", 5)});
  // With the value known, a wrong one is refused.
  CHECK(model.step(at("x", 5), KvInput::cas("k", 4, "y"), KvOutput::mismatch("z", 5)).empty());
  CHECK(model.describe(KvInput::cas("k", 4, "y"), KvOutput::mismatch_version(5)) ==
        "cas(v4, 'y') -> mismatch (current v5)");
}

TEST_CASE("kv model: descriptions read as the operation and its answer", "[linearizability]") {
  CHECK(model.describe(KvInput::cas("k", 0, "v"), KvOutput::mismatch("w", 3)) ==
        "cas(absent, 'v') -> mismatch (current 'w' v3)");
  CHECK(model.describe(KvInput::put("k", "v"), std::nullopt) == "put 'v' -> no answer");
  CHECK(model.describe(KvState{true, "y", 5, false}) == "'y' above v5");
}
