#include "replicas.hpp"

#include <algorithm>

#include <elfin/addr.hpp>

namespace elfin::actors::kv::internal {

ShardReplicas::ShardReplicas(const protocols::sharding::Assignments& assignments)
    : epoch_(assignments.epoch), first_shard_(assignments.first_shard) {
  nodes_.reserve(assignments.owners.size());
  for (std::uint32_t i = 0; i < assignments.owners.size(); ++i) {
    std::vector<std::uint16_t> nodes;
    for (const auto& entry : assignments.replica_set(first_shard_ + i)) {
      const std::uint16_t node = Addr(entry.endpoint).node_no();
      if (node != 0 && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    nodes_.push_back(std::move(nodes));
  }
  for (const auto& entry : assignments.pods) {
    const std::uint16_t node = Addr(entry.endpoint).node_no();
    if (node != 0 && std::find(pods_.begin(), pods_.end(), node) == pods_.end()) pods_.push_back(node);
  }
}

const std::vector<std::uint16_t>& ShardReplicas::of(std::uint32_t shard) const {
  static const std::vector<std::uint16_t> kNone;
  if (shard < first_shard_ || shard - first_shard_ >= nodes_.size()) return kNone;
  return nodes_[shard - first_shard_];
}

protocols::raft::Placement ShardReplicas::placement() const {
  protocols::raft::Placement out;
  out.epoch = epoch_;
  out.first_partition = first_shard_;
  out.replicas.reserve(nodes_.size());
  for (const auto& nodes : nodes_) out.replicas.emplace_back(nodes.begin(), nodes.end());
  out.nodes.assign(pods_.begin(), pods_.end());
  return out;
}

}  // namespace elfin::actors::kv::internal
