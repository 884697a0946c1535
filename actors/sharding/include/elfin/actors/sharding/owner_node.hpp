// owner_node: the node selector that sends an entity message to the node whose pod owns the
// entity's shard, read from this pod's assignment cache. Give it to a remote group of the network
// battery that fronts the entity group on every pod node (`RemoteGroupOptions::pick`):
//
//   [[remote]] carts            nodes = the pod nodes, remote_name = "carts.local",
//                               pick = actors::sharding::owner_node(cache, "jump-xxh64/1:1024", cart_id)
//   carts.local                 actors::sharding::entities(...)
//
// Senders route to `carts`; a message whose shard this pod owns goes to the local `carts.local`,
// one whose shard another pod owns goes to that pod's node (its endpoint address names it), and
// one whose owner is unknown or not connected is refused (NoRoute), for the sender to retry; an
// owner whose node is not connected is reported to the manager by the pod's sharding actor. The
// receiving pod checks ownership again (its entity router), so a stale cache never makes an
// entity run where its shard is not owned. A ShardOwner request (why was I refused?) goes the way
// an entity message of its shard goes, so the pod that refused is the one that explains.
//
// Thread safety: the returned function may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/envelope.hpp>

namespace elfin::actors::sharding {

using NodePick = std::function<std::optional<std::uint16_t>(const Envelope&, const std::vector<std::uint16_t>&)>;

/// Picks the owner's node for a message (this node when this pod owns the shard).
[[nodiscard]] NodePick owner_node(std::shared_ptr<AssignmentCache> cache, std::string shard_function,
                                  std::function<std::optional<std::string>(const Envelope&)> entity_id);

}  // namespace elfin::actors::sharding
