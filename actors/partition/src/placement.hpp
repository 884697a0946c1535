// The partition group's placement table (config `placement = "assignment"`): one actor of the
// group, keyed `kPlacementKey`, holds the newest raft.Placement the group received and
//   - answers GetPlacement (a partition actor recovering with nothing on disk asks where its
//     replicas are; the answer waits until a table has arrived), and
//   - passes every newer table on to the group's running partition actors (PlacementChanged,
//     routed to all of them), whose leaders move their membership toward it.
// A table reaches only partitions that exist: it never creates one.
#pragma once

#include <cstdint>
#include <vector>

#include <elfin/message.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/task.hpp>

#include "actor.hpp"

namespace elfin::actors::partition::internal {

/// Where one partition's replicas should be, as of table `epoch` (the owner first). `settled`:
/// the owner is the one the first table this group received named (or the first one named at
/// all): not a pod that became owner while this process ran, which may be a replica the leader
/// of an existing group has not reached yet.
struct PlacementOf {
  std::uint64_t epoch = 0;
  std::vector<protocols::raft::NodeId> replicas;
  bool settled = false;
  ELFIN_PART(epoch, replicas, settled);
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
  /// Per partition from `first_partition`: the first owner any table named (0: none yet).
  std::vector<protocols::raft::NodeId> first_owners;
  ELFIN_MESSAGE(partition_actor, PlacementChanged, epoch, first_partition, replicas, first_owners);
  ELFIN_NO_DUMPING;

  [[nodiscard]] PlacementOf of(protocols::raft::PartitionId partition) const;
};

/// The node ids of `replicas` without repeats, in their order (a pod restarted under a new
/// incarnation may be listed twice for a while).
[[nodiscard]] std::vector<protocols::raft::NodeId> distinct(std::vector<protocols::raft::NodeId> replicas);

Task<> placement_exec(PartitionContext ctx);

}  // namespace elfin::actors::partition::internal
