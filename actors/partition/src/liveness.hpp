// Node liveness for quiesced partitions. A quiesced follower takes no ticks, so it cannot notice
// by itself that its leader's node died; instead of a heartbeat per partition, one actor per node
// (the partition group's key kLivenessKey) pings the same actor on every other node it knows of
// (`nodes`, the nodes its quiesced partitions' leaders are on, the nodes that ping it) each
// heartbeat interval (tick × heartbeat_ticks) and declares a node down once nothing came
// from it for an election timeout (tick × election_ticks). A partition that quiesces registers
// its leader here (WatchLeader) and deregisters when it wakes (Unwatch); a node going down is
// told only to the partitions watching it (LeaderDown), which wake and elect. So an idle node
// pair exchanges one message per interval each way, whatever the number of partitions.
//
// The pings travel as RaftMessages of the reserved partition kLivenessKey (type Heartbeat), so
// the route and node selector that carry Raft traffic carry them too; each carries its sender's
// start stamp (`index`), so a node that restarted within the timeout counts as gone as well (the
// partitions it led lost their leader). The actor starts with the
// first partition that quiesces on the node, or with the first ping from a peer, and then stays.
//
// Thread safety: the messages are plain values; the actor is an actor.
#pragma once

#include <cstdint>

#include <elfin/message.hpp>
#include <elfin/task.hpp>

#include "actor.hpp"
#include "router.hpp"

namespace elfin::actors::partition::internal {

/// From a partition that quiesced: tell it if node `leader` goes down.
struct WatchLeader {
  std::uint64_t partition = 0;
  std::uint64_t leader = 0;
  ELFIN_MESSAGE(partition_actor, WatchLeader, partition, leader);
  ELFIN_NO_DUMPING;
};
/// From a partition that woke up.
struct Unwatch {
  std::uint64_t partition = 0;
  ELFIN_MESSAGE(partition_actor, Unwatch, partition);
  ELFIN_NO_DUMPING;
};
/// To a quiesced partition: its leader's node `node` is down.
struct LeaderDown {
  std::uint64_t partition = 0;
  std::uint64_t node = 0;
  ELFIN_MESSAGE(partition_actor, LeaderDown, partition, node);
  ELFIN_NO_DUMPING;
};

Task<> liveness_exec(PartitionContext ctx);

}  // namespace elfin::actors::partition::internal
