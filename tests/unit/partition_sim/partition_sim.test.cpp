// The partition actors (actors/partition with the WAL actors) in the deterministic simulated
// cluster, checked with the linearizability checker: seeded runs under faults (sim_run.hpp) with
// zero violations, no lost acknowledged write and no replica divergence; and a seed replays the
// same run exactly.
//
// ELFIN_PARTITION_SIM_RUNS sets how many seeds run (default: the CI budget, fewer in sanitized
// builds); ELFIN_PARTITION_SIM_SEED=<seed> runs that seed alone and ELFIN_PARTITION_SIM_OPERATIONS
// sets its operation count (a failure prints both: a sanitized build runs fewer operations, so its
// seed replays in another build only with its count); ELFIN_PARTITION_SIM_STATS=1 prints what the
// runs exercised.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim_run.hpp"

TEST_CASE("seeded runs under partitions, crashes and lossy links stay linearizable and lose no acknowledged write",
          "[partition_sim]") {
  const std::uint64_t default_runs = psim::kSanitized ? 2 : 6;
  const std::uint64_t only = psim::env_number("ELFIN_PARTITION_SIM_SEED", 0);
  const std::uint64_t runs = only != 0 ? 1 : psim::env_number("ELFIN_PARTITION_SIM_RUNS", default_runs);
  psim::RunStats total;
  std::size_t operations = 0;
  for (std::uint64_t i = 0; i < runs; ++i) {
    const std::uint64_t seed = only != 0 ? only : 1000 + i;
    psim::RunOptions options;
    options.seed = seed;
    options.operations = psim::env_number("ELFIN_PARTITION_SIM_OPERATIONS", psim::kSanitized ? 500 : 1000);
    const psim::RunResult r = psim::run(options);
    INFO("replay with ELFIN_PARTITION_SIM_SEED=" << seed << " ELFIN_PARTITION_SIM_OPERATIONS=" << options.operations
                                                 << " (" << r.describe << ")");
    INFO(r.check.summary());
    CHECK(r.check.verdict == elfin::linearizability::Verdict::Ok);
    for (const auto& problem : r.problems) FAIL_CHECK(problem);
    // The run did what it is for: writes acknowledged, faults injected, answers lost to them.
    CHECK(r.stats.acknowledged_writes > 20);
    CHECK(r.stats.crashes + r.stats.isolations + r.stats.lossy_links > 0);
    operations += r.history.size();
    total += r.stats;
  }
  if (std::getenv("ELFIN_PARTITION_SIM_STATS") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    std::printf(
        "%llu runs: %zu operations in the histories, %zu acknowledged writes, %zu without an answer, %zu reads, "
        "%zu NotLeader, %zu crashes, %zu isolations, %zu lossy-link periods, %zu snapshot restores, %.1f s virtual\n",
        static_cast<unsigned long long>(runs), operations, total.acknowledged_writes, total.unknown, total.reads,
        total.not_leader, total.crashes, total.isolations, total.lossy_links, total.restores,
        std::chrono::duration<double>(total.virtual_time).count());
  }
}

TEST_CASE("the same seed gives the same run: identical history and trace", "[partition_sim]") {
  psim::RunOptions options;
  options.seed = 77;
  options.operations = psim::kSanitized ? 60 : 120;
  const psim::RunResult a = psim::run(options);
  const psim::RunResult b = psim::run(options);
  INFO(a.describe);
  CHECK(psim::first_difference(a, b).empty());
  CHECK(a.trace.size() > 1000);
  // Another seed is another run.
  options.seed = 78;
  const psim::RunResult c = psim::run(options);
  CHECK(c.trace != a.trace);
}

TEST_CASE("stale reads at any replica are caught as violations (the check has teeth)", "[partition_sim]") {
  std::size_t violating_runs = 0;
  for (std::uint64_t seed = 2000; seed < (psim::kSanitized ? 2001 : 2003); ++seed) {
    psim::RunOptions options;
    options.seed = seed;
    options.operations = 400;
    options.stale_reads = true;
    const psim::RunResult r = psim::run(options);
    INFO(r.describe << "\n" << r.check.summary());
    CHECK(r.check.verdict != elfin::linearizability::Verdict::Unknown);
    violating_runs += r.check.verdict == elfin::linearizability::Verdict::Violation;
  }
  CHECK(violating_runs > 0);
}

TEST_CASE("a new group's first leader is the one the static node list picks, and leads at once", "[partition_sim]") {
  // Node nodes[p mod 3] campaigns as the group starts (the election timeout is 100 to 200 ms of
  // virtual time); the others would split the vote if all did.
  for (std::uint64_t partition = 0; partition < 3; ++partition) {
    const psim::StaticLeaderProbe probe = psim::probe_static_first_leader(41 + partition, partition);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(probe.after).count();
    INFO("partition " << partition << ": node " << probe.leader << " led after " << micros << " us; a put at node 1 "
                      << "was pointed at node " << probe.hint);
    // Node 1 campaigns for partition 0 itself; a put there for another points at its leader-to-be.
    if (partition != 0) CHECK(probe.hint == partition + 1);
    CHECK(probe.leader == partition + 1);
    CHECK(probe.after < std::chrono::milliseconds(100));
  }
}
