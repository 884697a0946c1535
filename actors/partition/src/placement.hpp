// The partition group's placement table (config `placement = "assignment"`): one actor of the
// group, keyed `kPlacementKey`, holds the newest raft.Placement the group received and
//   - answers GetPlacement (a partition actor recovering with nothing on disk asks where its
//     replicas are; the answer waits until a table has arrived), and
//   - passes every newer table on to the group's running partition actors (PlacementChanged,
//     routed to all of them), whose leaders move their membership toward it, and
//   - on the first table, starts the replicas this node holds on disk (a snapshot directory each)
//     that the table places elsewhere (Wake): removed while the node was down, they learn it from
//     the members and release themselves (see actor.cpp).
// A table reaches only partitions that exist: it never creates one.
#pragma once

#include <cstdint>
#include <vector>

#include <elfin/message.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/task.hpp>

#include "actor.hpp"

namespace elfin::actors::partition::internal {

/// Where one partition's replicas should be, as of table `epoch` (the owner first), and every
/// node of the map (`nodes`: those an owner asks before it creates the partition).
struct PlacementOf {
  std::uint64_t epoch = 0;
  std::vector<protocols::raft::NodeId> replicas;
  std::vector<protocols::raft::NodeId> nodes;
  ELFIN_PART(epoch, replicas, nodes);
};

/// Asked of the table by a recovering partition actor; answered once a table is known.
struct GetPlacement {
  protocols::raft::PartitionId partition = 0;
  ELFIN_REQUEST(partition_actor, GetPlacement, PlacementOf, partition);
};

/// A newer table, to every running partition actor of the group.
struct PlacementChanged {
  std::uint64_t epoch = 0;
  protocols::raft::PartitionId first_partition = 0;
  std::vector<std::vector<protocols::raft::NodeId>> replicas;
  /// The table's `nodes`, or (a table without them) every node its replicas name.
  std::vector<protocols::raft::NodeId> nodes;
  ELFIN_MESSAGE(partition_actor, PlacementChanged, epoch, first_partition, replicas, nodes);
  ELFIN_NO_DUMPING;

  [[nodiscard]] PlacementOf of(protocols::raft::PartitionId partition) const;
};

/// Starts the partition's actor (and so its recovery): sent to the replicas this node holds on
/// disk that the first table places elsewhere (removed while the node was down), which then find
/// out from the members and release themselves. Nothing else: being started is the point.
struct Wake {
  protocols::raft::PartitionId partition = 0;
  ELFIN_MESSAGE(partition_actor, Wake, partition);
  ELFIN_NO_DUMPING;
};

/// The node ids of `replicas` without repeats, in their order (a pod restarted under a new
/// incarnation may be listed twice for a while).
[[nodiscard]] std::vector<protocols::raft::NodeId> distinct(std::vector<protocols::raft::NodeId> replicas);

Task<> placement_exec(PartitionContext ctx);

}  // namespace elfin::actors::partition::internal
