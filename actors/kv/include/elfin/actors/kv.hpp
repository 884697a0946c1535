// The KV front: the group clients talk to (protocols/kv: Put, Get, Delete, Cas, DeleteIfVersion,
// Scan). It maps a key to its shard, jump(xxh64(key), shards) with `shards` = 1024 by default,
// which is the partition id of the
// shard's Raft group, and sends the command to the shard's leader: to the local partition group
// when this node leads, else through the `kv.peers` remote group to the front on the leader's
// node, which asks its own replica. It follows NotLeader hints, retries when no leader is known
// or a replica cannot serve, and answers the client with the typed result before the request's
// deadline (`request_timeout`). Scans go to one shard, or to every shard and are merged in key
// order up to the limit.
//
//   [[groups]]  name = "kv"  blueprint = "kv.front"
//   [[remote]]  name = "kv.peers"  nodes = [1, 2, 3]  remote_name = "kv"  pick = "kv.node"
//   [[routes]]  from = "kv"  to = "partitions"  messages = ["raft.Propose", "raft.Read"]
//   [[routes]]  from = "kv"  to = "kv.peers"  messages = ["kv.ShardRequest"]
//
// Replicas: without a manager, every shard's replicas are the partition group's `nodes` (the
// same list as this group's `nodes`). With one (`manager = true`), the front registers its pod
// with the shard manager (it answers PingPod, AssignShards, UnassignShards and takes
// AssignmentsChanged), each shard's replicas are the assignment's replica set (a pod's node
// number is that of its registered endpoint, this front's address), and every newer assignment
// goes to the partition group as a raft.Placement table:
//
//   [[remote]]  name = "sharding.manager"  nodes = [100]
//   [[routes]]  from = "kv"  to = "sharding.manager"  messages = ["sharding.Register", ...]
//   [[routes]]  from = "kv"  to = "partitions"  messages = ["raft.Placement"]
//
// A shard's partitions are created by its first request (to the owner, which bootstraps it, with
// a manager). Which replica leads is learnt from answers (and from the other fronts' requests this
// node's replica served as leader) and cached per shard. Clients route by the same knowledge: each
// answer names the node that led the shard and the front's shard count, and kv.Leaders answers the
// whole cache, so a client sends a key to its leader's pod and the front there asks its own
// replica, without a kv.ShardRequest.
//
// Retries and outcomes: a Put, Delete or read whose attempt timed out is retried. Each write
// carries a request id (KvCommand's origin and sequence) that every attempt proposes again, and the
// KV state machine applies an id once, so a retried write (or a request the network delivered
// twice) is applied once and answered as the first application was. A Cas or DeleteIfVersion is
// not retried once it may have been applied: the client gets Timeout.
//
// Thread safety: `blueprint`, `shard_of` and `shard_request_node` from any thread (the latter is
// a router function).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <elfin/actors/kv/config.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/envelope.hpp>
#include <elfin/protocols/kv.hpp>

namespace elfin::actors::kv {

/// The front's blueprint (one actor; every request runs concurrently with the others).
[[nodiscard]] Blueprint blueprint();

/// The shard of `key`: jump(xxh64(key), shards), 0-based (the partition id of its Raft group).
[[nodiscard]] protocols::kv::ShardId shard_of(std::string_view key,
                                              protocols::kv::ShardId shards = protocols::kv::kShards) noexcept;

/// The node selector of `kv.peers`: a ShardRequest to the node it names (`node`), if connected.
[[nodiscard]] std::optional<std::uint16_t> shard_request_node(const Envelope& envelope,
                                                              const std::vector<std::uint16_t>& connected);

inline constexpr std::string_view kBlueprintName = "kv.front";
inline constexpr std::string_view kNodeSelectorName = "kv.node";

/// Registers the front as "kv.front" and `shard_request_node` as the selector "kv.node".
void register_blueprints(BlueprintRegistry& registry);

}  // namespace elfin::actors::kv
