// Histories generated from a real sequential store (random_history.hpp): always linearizable;
// with one injected anomaly, always found, on the key it was injected in.
#include <catch2/catch.hpp>

#include "random_history.hpp"

#include <elfin/linearizability/checker.hpp>

namespace lin = elfin::linearizability;

TEST_CASE("histories of a real sequential store with random overlaps are linearizable", "[linearizability]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    lin_test::GenOptions options;
    options.seed = seed;
    options.operations = 2000;
    options.keys = seed % 2 == 0 ? 5 : 50;  // many overlaps per key, or few
    options.clients = 12;
    options.pending = 0.03;
    const auto history = lin_test::generate(options);
    const auto result = lin::check(lin::KvModel{}, history);
    INFO("seed " << seed << ": " << result.summary());
    REQUIRE(result.verdict == lin::Verdict::Ok);
    CHECK(result.pending > 0);
  }
}

TEST_CASE("one injected anomaly in a generated history is found on its key", "[linearizability]") {
  const auto anomaly =
      GENERATE(lin_test::Anomaly::GhostValue, lin_test::Anomaly::StaleRead, lin_test::Anomaly::LostWrite);
  int injected = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    lin_test::GenOptions options;
    options.seed = seed;
    options.operations = 1000;
    options.keys = 8;
    options.clients = 6;
    options.pending = 0.02;
    options.deletes = anomaly != lin_test::Anomaly::LostWrite;
    auto history = lin_test::generate(options);
    const auto key = lin_test::inject(history, anomaly, seed);
    if (!key) continue;
    ++injected;
    const auto result = lin::check(lin::KvModel{}, history);
    INFO("seed " << seed << ", anomaly " << static_cast<int>(anomaly) << ": " << result.summary());
    REQUIRE(result.verdict == lin::Verdict::Violation);
    REQUIRE(result.violations.size() == 1);
    CHECK(result.violations.front().key == *key);
  }
  CHECK(injected >= 15);
}
