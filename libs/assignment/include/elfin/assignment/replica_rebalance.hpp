// The replica rebalance: Shardcake's assignment generalised from one owner per shard to a replica
// set of `replication_factor` (RF) distinct pods, as a pure function of the registered pods and the
// current ReplicaMap (no clocks, no I/O, no randomness: the same input gives the same plan).
//
// RF = 1 on a map with at most one replica per shard is `plan_rebalance` exactly: the map's owners
// go through Shardcake's algorithm and its moves come back as replica moves. Otherwise, with
// r = min(RF, pods) replicas wanted per shard:
//
//   1. Repair first (every kind of round, no cap: a missing replica is lost redundancy). A replica
//      on a pod missing from `pods` is replaced by one on a new pod (the move's `from` names the
//      missing pod); a shard with fewer than r gains replicas; a shard with more than RF (the
//      factor was lowered) loses its extras, from the fullest pods, never its owner while another
//      will do. A new replica goes to the newest-version pod with the fewest replicas (ties: pod
//      order) that holds none of the shard. If anything was repaired, that is the round.
//   2. Otherwise, in a regular round with every pod on the newest version: balance. While the
//      fullest pod holds two or more replicas more than the emptiest pod that may still gain, one
//      replica moves from the first to the second: its highest shard that the target does not
//      hold and that did not move yet this round. A pod that loses does not gain in the same
//      round, and none gains more than ceil(shards × rebalance_rate) (Shardcake's cap).
//
// What this guarantees (tests/unit/assignment/replica_rebalance.test.cpp checks each over random
// pod sets): a shard's replicas are on distinct pods; after rounds until nothing changes, every
// shard has min(RF, pods) replicas and the replica counts of any two pods differ by at most one;
// a shard has at most one move (add the new replica, then drop the old) per balancing round; a
// joining pod only gains (nothing else moves) and a leaving pod's replicas are replaced one for one.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>

#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance.hpp>
#include <elfin/assignment/replica_map.hpp>
#include <elfin/assignment/replica_plan.hpp>

namespace elfin::assignment {

struct ReplicaOptions {
  /// Replicas wanted per shard, each on its own pod; fewer (one per pod) while there are fewer
  /// pods. 1 is Shardcake's single owner.
  std::uint32_t replication_factor = 1;
  /// As RebalanceOptions::rebalance_rate: the most replicas a pod gains in one balancing round is
  /// ceil(shards × rebalance_rate). Repairs ignore it.
  double rebalance_rate = 0.02;

  friend bool operator==(const ReplicaOptions&, const ReplicaOptions&) = default;
};

/// What one round changes. Pods listed twice (same id) count once, the first one. With no pods,
/// or a replication factor of 0, nothing changes.
[[nodiscard]] ReplicaPlan plan_replicas(std::span<const Pod> pods, const ReplicaMap& map, RoundKind kind,
                                        const ReplicaOptions& options = {});

}  // namespace elfin::assignment
