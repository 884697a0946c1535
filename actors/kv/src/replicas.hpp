// The front's view of where shards live when a shard manager places them: per shard, the node
// numbers of its replicas, the owner first, read from the manager's assignment. A pod is known by
// its PodRef; its node number is that of its registered endpoint (the raw address of the pod's KV
// front names its node), which is also its replicas' Raft node id. A pod restarted under a new
// incarnation keeps its node number, so it is listed once.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include <elfin/protocols/raft.hpp>
#include <elfin/protocols/sharding/assignments.hpp>

namespace elfin::actors::kv::internal {

class ShardReplicas {
 public:
  ShardReplicas() = default;
  explicit ShardReplicas(const protocols::sharding::Assignments& assignments);

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  /// The replicas of `shard`, the owner first; empty when it has none (or is unknown).
  [[nodiscard]] const std::vector<std::uint16_t>& of(std::uint32_t shard) const;
  /// The table for the partition group (partition id = shard).
  [[nodiscard]] protocols::raft::Placement placement() const;

 private:
  std::uint64_t epoch_ = 0;
  std::uint32_t first_shard_ = 0;
  std::vector<std::vector<std::uint16_t>> nodes_;
  std::vector<std::uint16_t> pods_;  ///< the node of every pod in the map, holding replicas or not
};

}  // namespace elfin::actors::kv::internal
