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
// Leaders register their followers' nodes too (WatchFollowers, on becoming leader), and hear
// when one goes down or comes back (FollowerLiveness): a leader may sleep without a follower
// whose node is down (libs/raft's report_node_down), so a dead node does not keep awake every
// partition it replicated, and wakes to catch the follower up when its node pings again.
//
// The same pings carry the awake partitions' timed heartbeats (coalesce_heartbeats): a leader's
// periodic Heartbeat and its follower's answer go to this actor (OutgoingBeat) instead of over
// the network one by one; each tick the actor sends what it holds for a node in one ping there,
// and the receiving liveness actor hands each beat to its partition. So two nodes exchange one
// message per tick each way however many partitions they share, not two per partition per
// heartbeat interval (CockroachDB's coalesced heartbeats). Votes, appends, read rounds and
// wake-ups never wait for a tick: they go straight to the peer.
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
#include <vector>

#include <elfin/message.hpp>
#include <elfin/protocols/raft.hpp>
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
/// From a partition that became leader: tell it when a node of `followers` goes down or comes
/// back (and at once which of them are down now).
struct WatchFollowers {
  std::uint64_t partition = 0;
  std::vector<std::uint64_t> followers;
  ELFIN_MESSAGE(partition_actor, WatchFollowers, partition, followers);
  ELFIN_NO_DUMPING;
};
/// To a leader: the node of one of its followers went down (`down`) or came back.
struct FollowerLiveness {
  std::uint64_t partition = 0;
  std::uint64_t node = 0;
  bool down = false;
  ELFIN_MESSAGE(partition_actor, FollowerLiveness, partition, node, down);
  ELFIN_NO_DUMPING;
};
/// To a quiesced partition: its leader's node `node` is down.
struct LeaderDown {
  std::uint64_t partition = 0;
  std::uint64_t node = 0;
  ELFIN_MESSAGE(partition_actor, LeaderDown, partition, node);
  ELFIN_NO_DUMPING;
};

/// From a partition (coalesce_heartbeats): a timed heartbeat, or the answer to one, for node `to`,
/// to travel with the next ping there.
struct OutgoingBeat {
  std::uint64_t to = 0;
  protocols::raft::Beat beat;
  ELFIN_MESSAGE(partition_actor, OutgoingBeat, to, beat);
  ELFIN_NO_DUMPING;
};

Task<> liveness_exec(PartitionContext ctx);

}  // namespace elfin::actors::partition::internal
