// One seeded run of the partition actors in a simulated cluster: three nodes, each with its WAL
// actors on a power-losing SimDisk and the partition group (partitions 0 and 1, RegisterMap state
// machines), clients proposing and reading through the partition protocol while the seed injects
// faults (a node isolated, the leader isolated, a crash with power loss and a restart, links that
// drop, duplicate, delay and reorder); then everything heals, every key is read once more, and the
// history the clients recorded is checked for linearizability.
//
// With `placement`, the partitions are placed as the KV service places them with a shard manager
// (config `placement = "assignment"`): four nodes, each partition on three, and the run's driver
// plays the manager, publishing the table (raft.Placement) to every node as the KV front passes it
// on. Two more faults then apply: a replica moved to the node that lacks one (a pod added and one
// removed: the leader adds a learner, promotes it and removes the old replica, owner included),
// and the manager down for a while (no table reaches anyone; a node restarted meanwhile waits for
// one before its partitions recover). At the end each partition's membership must have reached
// the table.
//
// With `front`, the nodes are KV pods instead: the KV front (actors/kv, shards 0 and 1) in front of
// the partitions, whose state machines are the service's KvStateMachine, and `kv.peers` between
// the fronts over the simulated network. Clients then speak protocols/kv to the front of a node
// of their choice, which finds the leader (NotLeader hints), retries and answers by its deadline;
// a Timeout is recorded as an unknown outcome, Unavailable as "not applied" (what the front
// promises, so the check holds it to that), a VersionMismatch as a mismatch with the current
// version.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <elfin/linearizability/check_result.hpp>
#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/kv_model.hpp>

namespace psim {

/// Sanitized builds run smaller workloads by default (each run is several times slower there).
#ifdef ELFIN_PARTITION_SIM_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// A numeric knob from the environment (seeds, runs, operations), `fallback` when unset.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr || *value == '\0' ? fallback : std::strtoull(value, nullptr, 10);
}

/// The faults a run may inject (a mask); the seed draws among the enabled ones.
enum FaultKind : unsigned {
  kIsolateNode = 1U,    ///< a node cut off from the other two: a 2/1 split
  kIsolateLeader = 2U,  ///< the leader of a partition cut off from the others
  kCrash = 4U,          ///< a node crashes with power loss (a torn tail now and then), restarts later
  kCrashLeader = 8U,    ///< the same for the leader of a partition
  kLossyLinks = 16U,    ///< every link drops, duplicates, delays and reorders messages for a while
  kAllFaults = 31U,
  kMoveReplica = 32U,  ///< placement runs: a partition's replica moved to the node without one
  kManagerDown = 64U,  ///< placement runs: no placement table published for a while
};

struct RunOptions {
  std::uint64_t seed = 1;
  std::size_t operations = 1000;  ///< client operations started during the faulty phase
  std::size_t clients = 5;
  bool faults = true;
  unsigned fault_kinds = kIsolateNode | kIsolateLeader | kCrash | kLossyLinks;
  /// Clients talk to the KV front (see above) instead of the partitions.
  bool front = false;
  /// Four nodes, the partitions placed by a table the driver publishes (see above); not with `front`.
  bool placement = false;
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
  std::size_t restores = 0;       ///< state machines restored from a snapshot
  std::size_t moves = 0;          ///< replicas moved (placement runs)
  std::size_t manager_downs = 0;  ///< periods without a manager (placement runs)
  // The front's answers (front runs only).
  std::size_t timeouts = 0;     ///< Timeout: the outcome unknown
  std::size_t unavailable = 0;  ///< Unavailable: refused, nothing applied
  std::size_t mismatches = 0;   ///< VersionMismatch answers to cas / delete_if_version
  std::size_t late = 0;         ///< no answer from the front within its deadline plus a margin
  std::chrono::nanoseconds virtual_time{0};

  /// Sums another run's figures into these (the scenarios' totals over their seeds).
  RunStats& operator+=(const RunStats& other) {
    acknowledged_writes += other.acknowledged_writes;
    unknown += other.unknown;
    reads += other.reads;
    not_leader += other.not_leader;
    crashes += other.crashes;
    isolations += other.isolations;
    lossy_links += other.lossy_links;
    restores += other.restores;
    moves += other.moves;
    manager_downs += other.manager_downs;
    timeouts += other.timeouts;
    unavailable += other.unavailable;
    mismatches += other.mismatches;
    late += other.late;
    virtual_time += other.virtual_time;
    return *this;
  }
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

/// Where two runs differ (the first operation of their histories, or their traces); empty when
/// they are the same run.
[[nodiscard]] std::string first_difference(const RunResult& a, const RunResult& b);

/// A front run's deadline, in virtual time: every node cut off from the others, one Put sent to
/// node 1's front (request_timeout 2 s). Whether and when (virtual time since the Put) it was
/// answered, and with which error (empty: it succeeded).
struct DeadlineProbe {
  bool answered = false;
  std::chrono::nanoseconds after{0};
  std::string error;
};
[[nodiscard]] DeadlineProbe probe_front_deadline(std::uint64_t seed);

/// Placement: a replica removed while its node was down. Partition 0 on nodes 1, 2, 3, written
/// to; node 3 crashes; the table moves its replica to node 4 and the membership follows; node 3
/// restarts and gets the table. What became of node 3's replica on disk.
struct StrayReplicaProbe {
  bool moved = false;                 ///< the leader's voters became 1, 2, 4 while node 3 was down
  bool held = false;                  ///< node 3 still had its snapshot directory when it restarted
  bool released = false;              ///< then: its snapshot directory gone, the released marker written
  std::string marker;                 ///< the marker's text
  bool readable = false;              ///< the writes read back afterwards (linearizably, from the leader)
  std::chrono::nanoseconds after{0};  ///< virtual time from the restart to the release
};
[[nodiscard]] StrayReplicaProbe probe_stray_replica(std::uint64_t seed);

/// Placement: a release cut short by a power loss right after its marker. Partition 0 on nodes
/// 1, 2, 3, written to past a snapshot; node 3 crashes, and its disk is left as such a crash
/// leaves it: the marker at its last index, the log still in the WAL, the snapshot directory
/// still there (the release's order) or gone (`directory_deleted`: the order that deleted it
/// before dropping the log). The table places the partition on 1, 2, 4; node 3 restarts and
/// gets the table, and its replica is asked for its status (which starts it, if nothing did).
struct InterruptedReleaseProbe {
  bool held = false;                   ///< before the crash, node 3 held a snapshot and log entries after it
  std::uint64_t released = 0;          ///< the marker's index
  std::uint64_t wal_last = 0;          ///< afterwards: partition 0's last index in node 3's WAL (0: none)
  std::size_t wal_entries = 0;         ///< and the entries it still returns
  bool directory = false;              ///< node 3 still has the snapshot directory afterwards
  std::uint64_t replica_last = 0;      ///< the restarted replica's last log index, as it reports it
  std::uint64_t replica_snapshot = 0;  ///< and its snapshot's index
  bool readable = false;               ///< the members read the last write back
};
[[nodiscard]] InterruptedReleaseProbe probe_interrupted_release(std::uint64_t seed, bool directory_deleted);

/// Placement: a partition whose replica moves to a new node (replication factor 1: the owner's
/// place taken, as the manager moves a lone replica) while the old one cannot be reached, and the
/// new node restarted (its first table names it the owner). A bootstrap there would be a second
/// group with none of the data.
struct MovedOwnerProbe {
  bool written = false;                 ///< the value written before the move was acknowledged
  bool bootstrapped_elsewhere = false;  ///< node 4 answered as a leader while node 1 was cut off
  std::string read_while_cut;           ///< what a read at node 4 got meanwhile ("" : no answer)
  bool read_back = false;               ///< after the heal, the value reads back
  std::string read_after;               ///< what the read after the heal got
};
[[nodiscard]] MovedOwnerProbe probe_moved_owner(std::uint64_t seed);

/// A table naming `replicas` (the owner first) for a partition nobody holds yet: how long after
/// its publication the owner leads the new group, in virtual time (the election timeout is
/// 100 to 200 ms of it).
struct FirstLeaderProbe {
  bool led = false;  ///< the owner led within 2 s
  std::chrono::nanoseconds after{0};
  std::uint64_t term = 0;  ///< the owner's term then
};
[[nodiscard]] FirstLeaderProbe probe_first_leader(std::uint64_t seed, const std::vector<std::uint64_t>& replicas);

/// The same for a partition placed by the static list `nodes = [1, 2, 3]` (three nodes): what a
/// put at node 1 is told first, then the first node found leading the partition.
struct StaticLeaderProbe {
  std::uint64_t hint = 0;    ///< the leader hint of a put at node 1 before any replica started (0: none)
  std::uint16_t leader = 0;  ///< 0: none within 2 s
  std::chrono::nanoseconds after{0};
};
[[nodiscard]] StaticLeaderProbe probe_static_first_leader(std::uint64_t seed, std::uint64_t partition);

}  // namespace psim
