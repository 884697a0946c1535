// Randomized, seeded simulations of 3- and 5-node groups under network faults, crashes with lost
// unsynced writes, partitions, snapshots, membership changes and leadership transfers. Safety is
// checked continuously by the cluster (sim_cluster.hpp); at the end the faults stop and the group
// must make progress, with every acknowledged proposal applied exactly once, in the same order,
// on every member. A failure prints its seed: ELFIN_RAFT_SIM_SEED=<seed> replays that run alone.
// ELFIN_RAFT_SIM_RUNS sets the number of runs per size (default: the CI budget; a fifth of it in
// sanitized builds); ELFIN_RAFT_SIM_STATS=1 prints what the runs exercised.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "sim_cluster.hpp"

using namespace elfin::raft;

namespace {

struct RunResult {
  std::string failure;
  std::size_t acknowledged = 0;
  std::size_t crashes = 0;
  std::size_t conf_changes = 0;
  std::size_t reads = 0;
  std::size_t snapshots = 0;
};

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value == nullptr ? fallback : std::strtoull(value, nullptr, 10);
}

RunResult simulate(std::uint64_t seed, std::size_t nodes, int ticks) {
  std::mt19937_64 pick(seed ^ 0x5eedULL);
  const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(pick) < p; };
  const auto below = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(pick); };

  sim::Options options;
  options.nodes = nodes;
  options.seed = seed;
  options.config.election_tick = 10;
  options.config.heartbeat_tick = 1;
  options.config.pre_vote = chance(0.8);
  options.config.check_quorum = true;
  options.config.max_inflight = 1 + below(8);
  options.config.max_bytes_per_append = chance(0.5) ? 100 : 1 << 20;
  options.config.read_mode = chance(0.5) ? Config::ReadMode::Lease : Config::ReadMode::Safe;
  options.faults.min_delay = 1;
  options.faults.max_delay = 2 + static_cast<int>(below(12));
  options.faults.drop = chance(0.7) ? 0.05 * static_cast<double>(below(3)) : 0;
  options.faults.duplicate = chance(0.5) ? 0.03 : 0;
  options.faults.max_disk_delay = chance(0.5) ? static_cast<int>(below(6)) : static_cast<int>(below(40));
  // Clocks drift within the bound lease reads are documented to tolerate (config.hpp).
  options.max_clock_drift = chance(0.5) ? 0.1 : 0;
  // Half the runs quiesce idle groups (Safe reads only; the cluster reports liveness each tick).
  options.config.quiesce_after_ticks = chance(0.5) ? 1 + static_cast<int>(below(3)) : 0;
  const sim::Faults calm{1, 3, 0, 0, 1};
  const double crash_rate = chance(0.5) ? 0.02 : 0.06;

  sim::Cluster cluster(options);
  RunResult result;
  NodeId next_id = nodes + 1;

  for (int tick = 0; tick < ticks && cluster.failure().empty(); ++tick) {
    cluster.run(options.steps_per_tick);
    std::vector<NodeId> ids = cluster.ids();
    const NodeId leader = cluster.leader();
    // Client traffic: mostly on the leader, sometimes on another node (NotLeader).
    const std::size_t proposals = below(4);
    for (std::size_t k = 0; k < proposals; ++k) {
      const NodeId on = leader != 0 && !chance(0.1) ? leader : ids[below(ids.size())];
      if (cluster.alive(on)) {
        std::ignore = cluster.propose(on);
      }
    }
    if (chance(0.2)) {
      const NodeId on = ids[below(ids.size())];
      if (cluster.alive(on)) {
        cluster.read(on);
      }
    }
    // Crashes lose whatever was not yet acknowledged durable; restarts recover from storage.
    if (chance(crash_rate)) {
      const NodeId victim = ids[below(ids.size())];
      if (cluster.alive(victim)) {
        cluster.crash(victim);
        ++result.crashes;
      }
    }
    for (NodeId id : ids) {
      if (!cluster.alive(id) && chance(0.1)) {
        cluster.restart(id);
      }
    }
    if (chance(0.02)) {
      if (chance(0.5)) {
        cluster.isolate(ids[below(ids.size())]);
      } else {
        std::vector<NodeId> shuffled = ids;
        std::shuffle(shuffled.begin(), shuffled.end(), pick);
        const std::size_t cut = 1 + below(shuffled.size() - 1);
        cluster.partition({{shuffled.begin(), shuffled.begin() + static_cast<std::ptrdiff_t>(cut)},
                           {shuffled.begin() + static_cast<std::ptrdiff_t>(cut), shuffled.end()}});
      }
    }
    if (chance(0.1)) {
      cluster.heal();
    }
    if (chance(0.05)) {
      const NodeId on = ids[below(ids.size())];
      if (cluster.alive(on)) {
        cluster.snapshot_and_compact(on, below(10));
      }
    }
    if (leader != 0 && cluster.alive(leader) && chance(0.03)) {
      // Membership: add a fresh learner, promote it, or remove a voter (the leader too), keeping
      // between `nodes` and `nodes + 1` voters.
      const ConfState conf = cluster.node(leader).conf();
      ProposeResult r = ProposeRejected{};
      if (!conf.learners.empty()) {
        r = cluster.node(leader).propose_conf_change({ConfChangeKind::AddVoter, conf.learners.front()});
      } else if (conf.voters.size() <= nodes) {
        cluster.spawn(next_id);
        r = cluster.node(leader).propose_conf_change({ConfChangeKind::AddLearner, next_id});
        ++next_id;
      } else {
        r = cluster.node(leader).propose_conf_change(
            {ConfChangeKind::RemoveNode, conf.voters[below(conf.voters.size())]});
      }
      if (r) {
        ++result.conf_changes;
      }
    }
    if (leader != 0 && cluster.alive(leader) && chance(0.01)) {
      const ConfState& conf = cluster.node(leader).conf();
      cluster.node(leader).transfer_leadership(conf.voters[below(conf.voters.size())]);
    }
  }
  if (!cluster.failure().empty()) {
    result.failure = cluster.failure();
    return result;
  }

  // Liveness: faults stop, everyone comes back; a leader must emerge, commit a new proposal and
  // every member must apply everything.
  cluster.heal();
  cluster.set_faults(calm);
  for (NodeId id : cluster.ids()) {
    cluster.restart(id);
  }
  std::uint64_t target = 0;
  const bool done = cluster.run_until(
      [&] {
        const NodeId leader = cluster.leader();
        if (leader == 0) {
          return false;
        }
        Node& l = cluster.node(leader);
        if (target == 0 || cluster.applied_index(leader) < target) {
          if (target == 0 || l.last_index() < target) {
            auto r = cluster.propose(leader);
            if (r) {
              target = *r;
            }
          }
          return false;
        }
        const ConfState& conf = l.conf();
        for (const auto* set : {&conf.voters, &conf.learners}) {
          for (NodeId id : *set) {
            if (!cluster.alive(id) || cluster.applied_index(id) < cluster.applied_index(leader)) {
              return false;
            }
          }
        }
        return true;
      },
      4000);
  if (!cluster.failure().empty()) {
    result.failure = cluster.failure();
    return result;
  }
  if (!done) {
    result.failure = "seed " + std::to_string(seed) + ": no progress after the faults stopped (leader " +
                     std::to_string(cluster.leader()) + ")";
    return result;
  }
  const NodeId leader = cluster.leader();
  const ConfState conf = cluster.node(leader).conf();
  const auto& reference = cluster.applied_ids(leader);
  for (const auto* set : {&conf.voters, &conf.learners}) {
    for (NodeId id : *set) {
      if (cluster.applied_ids(id) != reference) {
        result.failure = "seed " + std::to_string(seed) + ": node " + std::to_string(id) +
                         " applied a different sequence than leader " + std::to_string(leader);
        return result;
      }
    }
  }
  for (std::uint64_t payload : cluster.acknowledged()) {
    if (std::find(reference.begin(), reference.end(), payload) == reference.end()) {
      result.failure = "seed " + std::to_string(seed) + ": acknowledged proposal " + std::to_string(payload) + " lost";
      return result;
    }
  }
  result.acknowledged = cluster.acknowledged().size();
  result.snapshots = cluster.sent(MessageType::InstallSnapshot);
  for (NodeId id : cluster.ids()) {
    if (cluster.alive(id)) {
      for (const ReadState& read : cluster.reads(id)) {
        result.reads += read.rejected ? 0 : 1;
      }
    }
  }
  return result;
}

void sweep(std::size_t nodes, std::uint64_t default_runs) {
#ifdef ELFIN_RAFT_SIM_SANITIZED
  default_runs /= 5;
#endif
  const std::uint64_t only = env_number("ELFIN_RAFT_SIM_SEED", 0);
  const std::uint64_t runs = only != 0 ? 1 : env_number("ELFIN_RAFT_SIM_RUNS", default_runs);
  std::size_t acknowledged = 0;
  std::size_t crashes = 0;
  std::size_t conf_changes = 0;
  std::size_t reads = 0;
  std::size_t snapshots = 0;
  for (std::uint64_t k = 0; k < runs; ++k) {
    const std::uint64_t seed = only != 0 ? only : nodes * 1000000 + k + 1;
    RunResult r = simulate(seed, nodes, 200);
    INFO("replay with ELFIN_RAFT_SIM_SEED=" << seed);
    REQUIRE(r.failure == "");
    acknowledged += r.acknowledged;
    crashes += r.crashes;
    conf_changes += r.conf_changes;
    reads += r.reads;
    snapshots += r.snapshots;
  }
  if (std::getenv("ELFIN_RAFT_SIM_STATS") != nullptr) {
    std::printf(
        "%zu nodes, %llu runs: %zu acknowledged proposals, %zu crashes, %zu conf changes, %zu reads served "
        "(on live nodes at the end), %zu snapshots sent\n",
        nodes, static_cast<unsigned long long>(runs), acknowledged, crashes, conf_changes, reads, snapshots);
  }
  // The runs did exercise what they claim to.
  if (only == 0) {
    CHECK(acknowledged > runs * 20);
    CHECK(crashes > runs / 4);
    CHECK(conf_changes > runs / 4);
  }
}

}  // namespace

TEST_CASE("simulated 3-node groups under faults, crashes and membership changes keep every safety property", "[raft]") {
  sweep(3, 700);
}

TEST_CASE("simulated 5-node groups under faults, crashes and membership changes keep every safety property", "[raft]") {
  sweep(5, 300);
}

TEST_CASE("a seed replays the same simulated run exactly", "[raft]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const RunResult a = simulate(7000000 + seed, 3, 100);
    const RunResult b = simulate(7000000 + seed, 3, 100);
    CHECK(a.failure == b.failure);
    CHECK(a.acknowledged == b.acknowledged);
    CHECK(a.crashes == b.crashes);
    CHECK(a.conf_changes == b.conf_changes);
    CHECK(a.reads == b.reads);
    CHECK(a.snapshots == b.snapshots);
  }
}
