// The partition actors: one Raft group member per partition on each node holding a replica,
// persisted through the WAL actors, talking to the partition's other replicas through the
// network battery. The protocol is elfin/protocols/raft.hpp, the config
// elfin/actors/partition/config.hpp, the state machine interface
// elfin/actors/partition/state_machine.hpp.
//
//   auto wal = topology.local("wal");
//   wal.mount(elfin::actors::wal::blueprint());
//   auto peers = topology.local("partitions.peers");
//   peers.mount(elfin::network::remote_group({.nodes = {1, 2, 3}, .remote_name = "partitions",
//                                             .pick = elfin::actors::partition::peer_node}));
//   auto partitions = topology.local("partitions");
//   partitions.mount(elfin::actors::partition::blueprint());
//   partitions.route_to(wal, elfin::filters::protocol("wal"));
//   partitions.route_to(peers, elfin::filters::messages<elfin::protocols::raft::RaftMessage>());
//
// A partition's actor is created by the first message naming it (a client's request or a peer's
// Raft message); with `placement = "assignment"` it joins the Raft group only where the group's
// placement table (raft.Placement) puts it (see elfin/actors/partition/config.hpp). It recovers before it answers
// anything: the newest snapshot file, then its log and hard state from the WAL. Its state lives in that actor only: no
// lock is shared between partitions. Writes follow propose -> WAL (durable) -> replicate -> commit -> apply -> answer.
//
// In a topology file (the `elfin` command registers both names, see `register_blueprints`):
//
//   [[groups]]  name = "partitions"  blueprint = "partition.partitions"
//   [[remote]]  name = "partitions.peers"  nodes = [1, 2, 3]  remote_name = "partitions"
//               pick = "partitions.peer"
//
// Thread safety: `blueprint` and `peer_node` from any thread (the latter is a router function).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <elfin/actors/partition/state_machine.hpp>
#include <string_view>

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/envelope.hpp>

namespace elfin::actors::partition {

struct Options {
  /// Null: every partition is a KvStateMachine.
  StateMachineFactory state_machine;
};

/// The partition group's blueprint (router: one actor per partition id, created lazily).
[[nodiscard]] Blueprint blueprint(Options options = {});

/// The node selector of the remote group that carries Raft messages to the peers: the node a
/// `RaftMessage` is addressed to (`to`), if connected; anything else is dropped.
[[nodiscard]] std::optional<std::uint16_t> peer_node(const Envelope& envelope,
                                                     const std::vector<std::uint16_t>& connected);

/// The names `register_blueprints` uses.
inline constexpr std::string_view kBlueprintName = "partition.partitions";
inline constexpr std::string_view kPeerSelectorName = "partitions.peer";

/// Registers the group (KV state machines) as "partition.partitions" and `peer_node` as the node
/// selector "partitions.peer", for topology files.
void register_blueprints(BlueprintRegistry& registry);

}  // namespace elfin::actors::partition
