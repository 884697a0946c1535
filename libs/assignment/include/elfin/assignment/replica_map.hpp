// ReplicaMap: which pods hold a replica of each shard, stamped with an epoch: the assignment
// generalised from one owner to a replica set, for services that keep `replication_factor`
// copies of a shard (the KV service: one Raft group per shard, one member per replica). A shard's
// pods are distinct; the first one is its owner, the pod an owner-based user (the sharding
// service's entity hosts) sends to, and a replica keeps its position while the set changes, so the
// owner only changes when the owner itself is moved. With one replica per shard it holds exactly
// what an AssignmentMap holds (`owners`, `from_assignment`).
//
// Thread safety: a plain value type; making a new map leaves the old one untouched.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/assignment/assignment_map.hpp>
#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/replica_plan.hpp>
#include <elfin/result.hpp>

namespace elfin::assignment {

class [[nodiscard]] ReplicaMap {
 public:
  /// No shards, epoch 0.
  ReplicaMap() = default;

  /// Shards `first` .. `first + count - 1`, no replicas, at `epoch`.
  [[nodiscard]] static ReplicaMap unassigned(ShardId first, std::uint32_t count, std::uint64_t epoch = 0);
  /// A map as stored (each shard with its pods, owner first) at `epoch`.
  [[nodiscard]] static ReplicaMap from_replicas(std::map<ShardId, std::vector<PodId>> replicas, std::uint64_t epoch);
  /// The same shards, each with its owner as its only replica (none if unassigned), same epoch.
  [[nodiscard]] static ReplicaMap from_assignment(const AssignmentMap& map);

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::size_t shard_count() const noexcept { return replicas_.size(); }
  [[nodiscard]] const std::map<ShardId, std::vector<PodId>>& replica_sets() const noexcept { return replicas_; }
  [[nodiscard]] bool contains(ShardId shard) const { return replicas_.contains(shard); }
  /// The shard's pods, owner first; empty if it has none or is not in the map.
  [[nodiscard]] std::vector<PodId> replicas(ShardId shard) const;
  /// The shard's owner (its first replica); empty if it has none or is not in the map.
  [[nodiscard]] std::optional<PodId> owner(ShardId shard) const;
  /// The owners only: the map an owner-based user reads (same shards, same epoch).
  [[nodiscard]] AssignmentMap owners() const;
  /// The shards `pod` holds a replica of, ascending.
  [[nodiscard]] std::vector<ShardId> shards_of(const PodId& pod) const;
  /// The shards without any replica, ascending.
  [[nodiscard]] std::vector<ShardId> unassigned_shards() const;
  /// The shards with fewer than `wanted` replicas, ascending.
  [[nodiscard]] std::vector<ShardId> under_replicated(std::size_t wanted) const;
  /// How many replicas each pod holds (pods holding none are absent).
  [[nodiscard]] std::map<PodId, std::size_t> counts() const;
  /// The number of replicas over all shards.
  [[nodiscard]] std::size_t replica_count() const;

  /// The next map (epoch + 1) without `pod` in any set: it unregistered or was found dead, and
  /// the rebalance gives its shards replacement replicas. If it held nothing, this same map.
  [[nodiscard]] ReplicaMap without_pod(const PodId& pod) const;

  /// The next map (epoch + 1) with the plan's changes made, or this same map for an empty plan.
  /// A plan that does not fit this map changes nothing and says which shard is wrong.
  [[nodiscard]] Result<ReplicaMap, PlanError> apply(const ReplicaPlan& plan) const;

  friend bool operator==(const ReplicaMap&, const ReplicaMap&) = default;

 private:
  std::uint64_t epoch_ = 0;
  std::map<ShardId, std::vector<PodId>> replicas_;
};

}  // namespace elfin::assignment

/// `epoch 4, 300 shards, 900 replicas: 10.0.0.1:1#1 holds 300 (0-299); ...`, then
/// `; without replicas 2 (7,9)` when some have none.
template <>
struct fmt::formatter<elfin::assignment::ReplicaMap> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::ReplicaMap& map, fmt::format_context& ctx) const {
    auto out = fmt::format_to(ctx.out(), "epoch {}, {} shards, {} replicas", map.epoch(), map.shard_count(),
                              map.replica_count());
    const char* separator = ": ";
    for (const auto& [pod, count] : map.counts()) {
      out = fmt::format_to(out, "{}{} holds {} ({})", separator, pod, count,
                           elfin::assignment::format_shard_ids(map.shards_of(pod)));
      separator = "; ";
    }
    std::vector<elfin::assignment::ShardId> empty;
    for (const auto& [shard, pods] : map.replica_sets()) {
      if (pods.empty()) empty.push_back(shard);
    }
    if (!empty.empty()) {
      out = fmt::format_to(out, "{}without replicas {} ({})", separator, empty.size(),
                           elfin::assignment::format_shard_ids(empty));
    }
    return out;
  }
};
