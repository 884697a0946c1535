// A partition node as the simulated-cluster tests mount it: the WAL actors on the node's
// simulated disk, the partition group, and `partitions.peers` reaching the partition group of
// every other node over the simulated network. The tests add what they need on top (the KV front).
#pragma once

#include <cstdint>

#include <elfin/actors/partition.hpp>
#include <elfin/testing/sim_cluster.hpp>
#include <elfin/topology.hpp>

namespace psim {

/// Declares the node's groups in `topology` (nodes 1..`nodes`); the partition group is "partitions".
void mount_partition_node(elfin::Topology& topology, elfin::testing::SimNode& node, std::uint16_t nodes,
                          elfin::actors::partition::Options options);

}  // namespace psim
