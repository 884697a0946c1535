// One seeded run of the partition actors in a simulated cluster: three nodes, each with its WAL
// actors on a power-losing SimDisk and the partition group (partitions 0 and 1, RegisterMap state
// machines), clients proposing and reading through the partition protocol while the seed injects
// faults (a node isolated, the leader isolated, a crash with power loss and a restart, links that
// drop, duplicate, delay and reorder); then everything heals, every key is read once more, and the
// history the clients recorded is checked for linearizability.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/linearizability/check_result.hpp>
#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/kv_model.hpp>

namespace psim {

struct RunOptions {
  std::uint64_t seed = 1;
  std::size_t operations = 1000;  ///< client operations started during the faulty phase
  std::size_t clients = 5;
  bool faults = true;
  /// Reads with `stale = true` at a random replica instead of linearizable reads at the leader:
  /// a deliberately weaker client, to show the checker catches what it allows.
  bool stale_reads = false;
};

struct RunStats {
  std::size_t acknowledged_writes = 0;
  std::size_t unknown = 0;  ///< writes without an answer (pending in the history)
  std::size_t reads = 0;
  std::size_t not_leader = 0;
  std::size_t crashes = 0;
  std::size_t isolations = 0;
  std::size_t lossy_links = 0;
  std::size_t restores = 0;  ///< state machines restored from a snapshot
  std::chrono::nanoseconds virtual_time{0};
};

struct RunResult {
  elfin::linearizability::History<elfin::linearizability::KvInput, elfin::linearizability::KvOutput> history;
  elfin::linearizability::CheckResult check;
  /// Anything else wrong: replicas that applied different commands at one index, an acknowledged
  /// write missing from the final reads, a key that could not be read at the end.
  std::vector<std::string> problems;
  std::vector<std::string> trace;
  RunStats stats;
  std::string describe;  ///< the cluster's seed line
};

[[nodiscard]] RunResult run(const RunOptions& options);

}  // namespace psim
