#include "partition_node.hpp"

#include <utility>

#include <elfin/actors/wal.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/raft.hpp>

namespace psim {

void mount_partition_node(elfin::Topology& topology, elfin::testing::SimNode& node, std::uint16_t nodes,
                          elfin::actors::partition::Options options) {
  auto disk = node.disk().file_system();
  auto wal = topology.local("wal");
  wal.mount(elfin::actors::wal::blueprint({.file_system = [disk](std::uint32_t) { return disk; }}));
  elfin::testing::SimRemoteGroupOptions to_peers;
  for (std::uint16_t n = 1; n <= nodes; ++n) {
    if (n != node.node_no()) to_peers.nodes.push_back(n);
  }
  to_peers.remote_name = "partitions";
  to_peers.pick = elfin::actors::partition::peer_node;
  auto peers = topology.local("partitions.peers");
  peers.mount(elfin::testing::sim_remote_group(std::move(to_peers)));
  auto partitions = topology.local("partitions");
  partitions.mount(elfin::actors::partition::blueprint(std::move(options)));
  partitions.route_to(wal, elfin::filters::protocol("wal"));
  partitions.route_to(peers, elfin::filters::messages<elfin::protocols::raft::RaftMessage>());
}

}  // namespace psim
