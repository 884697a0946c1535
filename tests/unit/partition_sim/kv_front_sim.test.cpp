// The KV front (actors/kv) in front of the partition actors in the deterministic simulated
// cluster (sim_run.hpp with `front`): clients speak protocols/kv to any node's front, which follows
// NotLeader hints, retries, answers by its deadline and never retries a cas once it may have
// applied; each fault scenario runs a few seeds, the histories checked per key with zero
// violations, no acknowledged write lost at the final reads and no replica divergence.
//
// ELFIN_KV_SIM_RUNS sets the seeds per scenario (default: the CI budget, fewer in sanitized
// builds); ELFIN_KV_SIM_SEED=<seed> runs that seed alone in every scenario (what a failure prints);
// ELFIN_KV_SIM_OPERATIONS the client operations per run; ELFIN_KV_SIM_STATS=1 prints what each
// scenario exercised.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim_run.hpp"

namespace {

/// Runs the scenario's seeds (`first_seed`, +1, ...) and checks each.
void scenario(const char* name, unsigned fault_kinds, std::uint64_t first_seed) {
  const std::uint64_t only = psim::env_number("ELFIN_KV_SIM_SEED", 0);
  const std::uint64_t runs = only != 0 ? 1 : psim::env_number("ELFIN_KV_SIM_RUNS", psim::kSanitized ? 1 : 3);
  const std::uint64_t operations = psim::env_number("ELFIN_KV_SIM_OPERATIONS", psim::kSanitized ? 300 : 600);
  psim::RunStats total;
  std::size_t checked = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < runs; ++i) {
    psim::RunOptions options;
    options.seed = only != 0 ? only : first_seed + i;
    options.front = true;
    options.fault_kinds = fault_kinds;
    options.operations = operations;
    const psim::RunResult r = psim::run(options);
    INFO(name << ": replay with ELFIN_KV_SIM_SEED=" << options.seed << " (" << r.describe << ")");
    INFO(r.check.summary());
    CHECK(r.check.verdict == elfin::linearizability::Verdict::Ok);
    for (const auto& problem : r.problems) FAIL_CHECK(problem);
    // The run did what it is for: writes acknowledged through the fronts, the faults injected.
    CHECK(r.stats.acknowledged_writes > 20);
    CHECK(r.stats.crashes + r.stats.isolations + r.stats.lossy_links > 0);
    // The front answers every request by its deadline (2 s; the client waits 3 s).
    CHECK(r.stats.late == 0);
    checked += r.history.size();
    total += r.stats;
  }
  if (std::getenv("ELFIN_KV_SIM_STATS") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    std::printf(
        "%s: %llu runs in %.1f s: %zu operations checked, %zu acknowledged writes, %zu unknown, %zu reads, "
        "%zu Timeout, %zu Unavailable, %zu VersionMismatch, %zu crashes, %zu isolations, %zu lossy-link periods, "
        "%.1f s virtual\n",
        name, static_cast<unsigned long long>(runs),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), checked,
        total.acknowledged_writes, total.unknown, total.reads, total.timeouts, total.unavailable, total.mismatches,
        total.crashes, total.isolations, total.lossy_links, std::chrono::duration<double>(total.virtual_time).count());
  }
}

}  // namespace

TEST_CASE("kv front: a leader cut off and 2/1 splits keep the front's answers linearizable", "[partition_sim]") {
  scenario("partitions", psim::kIsolateNode | psim::kIsolateLeader, 3000);
}

TEST_CASE("kv front: leader crashes with power loss and restarts keep the front's answers linearizable",
          "[partition_sim]") {
  scenario("crashes", psim::kCrashLeader | psim::kCrash, 3100);
}

TEST_CASE("kv front: links that drop, duplicate and reorder messages keep the front's answers linearizable",
          "[partition_sim]") {
  scenario("lossy links", psim::kLossyLinks, 3200);
}

TEST_CASE("kv front: every fault mixed keeps the front's answers linearizable", "[partition_sim]") {
  scenario("mixed", psim::kAllFaults, 3300);
}

TEST_CASE("kv front: the same seed gives the same run through the front: identical history and trace",
          "[partition_sim]") {
  psim::RunOptions options;
  options.seed = 91;
  options.front = true;
  options.operations = psim::kSanitized ? 60 : 150;
  const psim::RunResult a = psim::run(options);
  const psim::RunResult b = psim::run(options);
  INFO(a.describe);
  CHECK(psim::first_difference(a, b).empty());
  CHECK(a.trace.size() > 1000);
}

TEST_CASE("kv front: a request's deadline passes in the cluster's virtual time", "[partition_sim]") {
  // Every node cut off: the Put cannot commit, and the front must give up at its 2 s deadline of
  // virtual time (it once read the machine's steady clock, whose 2 s never came within the run).
  const psim::DeadlineProbe probe = psim::probe_front_deadline(5);
  REQUIRE(probe.answered);
  CHECK(probe.after >= std::chrono::milliseconds(1900));
  CHECK(probe.after <= std::chrono::milliseconds(2500));
  CHECK_THAT(probe.error, Catch::StartsWith("Timeout") || Catch::StartsWith("Unavailable"));
}
