// Assignments: the whole shard → pod map as the manager publishes it (GetAssignments, and every
// AssignmentsChanged), stamped with its epoch. The manager sends a map only after it has
// persisted it, so an epoch a pod has seen never goes back.
//
// Compact on the wire: the registered pods once, then one small integer per shard (the owner's
// index in `pods`, or -1 when the shard is unassigned); 1024 shards cost about 1-2 KiB. With a
// replication factor above 1, `replicas` adds per shard the indices of the pods holding its other
// replicas; the owner is the first replica, so owner-based readers (entity hosts) read `owners`
// only and are unaffected.
//
// A pod applies a newer map to *other* pods' entries only: its own ownership changes only through
// AssignShards / UnassignShards (Shardcake #135: a refresh racing with assign lost fresh shards).
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <elfin/message.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>

namespace elfin::protocols::sharding {

struct Assignments {
  std::uint64_t epoch = 0;
  std::string shard_function;            ///< `<name>/<version>:<shards>`, e.g. `jump-xxh64/1:1024`
  std::uint32_t first_shard = 0;         ///< the shard id of `owners[0]` (0 for jump-xxh64, 1 for shardcake)
  std::vector<PodEntry> pods;            ///< every registered pod, owning shards or not
  std::vector<std::int32_t> owners;      ///< per shard from `first_shard`: index into `pods`, -1 unassigned
  std::uint32_t replication_factor = 1;  ///< the manager's `replication_factor` when it made this map
  /// Per shard from `first_shard`: indices into `pods` of its replicas after the owner. Empty (no
  /// entry at all) when every shard has one replica at most.
  std::vector<std::vector<std::int32_t>> replicas;
  ELFIN_PART(epoch, shard_function, first_shard, pods, owners, ELFIN_DEFAULT(replication_factor),
             ELFIN_DEFAULT(replicas));

  /// Every pod holding a replica of `shard`, the owner first; empty if it has none.
  [[nodiscard]] std::vector<PodEntry> replica_set(std::uint32_t shard) const {
    std::vector<PodEntry> set;
    if (auto first = owner(shard)) set.push_back(*first);
    if (shard < first_shard || shard - first_shard >= replicas.size()) return set;
    for (const std::int32_t index : replicas[shard - first_shard]) {
      if (index >= 0 && static_cast<std::size_t>(index) < pods.size())
        set.push_back(pods[static_cast<std::size_t>(index)]);
    }
    return set;
  }

  /// The owner of `shard`, if it is in the map and assigned.
  [[nodiscard]] std::optional<PodEntry> owner(std::uint32_t shard) const {
    if (shard < first_shard || shard - first_shard >= owners.size()) return std::nullopt;
    const std::int32_t index = owners[shard - first_shard];
    if (index < 0 || static_cast<std::size_t>(index) >= pods.size()) return std::nullopt;
    return pods[static_cast<std::size_t>(index)];
  }
  /// The shards `pod` owns, ascending.
  [[nodiscard]] std::vector<std::uint32_t> shards_of(const PodRef& pod) const {
    std::vector<std::uint32_t> shards;
    for (std::size_t i = 0; i < owners.size(); ++i) {
      const std::int32_t index = owners[i];
      if (index >= 0 && static_cast<std::size_t>(index) < pods.size() &&
          pods[static_cast<std::size_t>(index)].pod == pod) {
        shards.push_back(first_shard + static_cast<std::uint32_t>(i));
      }
    }
    return shards;
  }

  friend bool operator==(const Assignments&, const Assignments&) = default;
};

}  // namespace elfin::protocols::sharding
