// The pod side of sharding (`sharding.pod` in topology files): the actor through which a pod
// takes part in the cluster the shard manager runs. Route the `sharding` protocol from this group
// to the manager group (a remote group on the manager's node in a cluster).
//
// At start it reads the map (GetAssignments), then registers with its identity — `address` and an
// incarnation unique to this process — and its own address as the endpoint the manager commands.
// If the actor restarts (its address changes) it registers again with the same identity. Then:
//   PingPod             answered at once with the pod's identity;
//   Backoff             answered after its delay (the pauses of request_entity's retries);
//   LocateGroup         the address of a group registered under that name in the cache (the
//                       broadcasts and owner hints of other pods' senders);
//   AssignShards        the shards are the pod's from that epoch on (idempotent); refused with
//                       WrongIncarnation, StaleEpoch, or Draining while stopping; the singletons
//                       of those shards are started (elfin::Ping to their groups);
//   UnassignShards      the shards stop being routed here, their entities are asked to stop, and
//                       the answer comes once they all stopped (or entity_termination_timeout);
//   AssignmentsChanged  other pods' entries only; a command newer than the map held makes the
//                       pod fetch the map again if no notification brings it (refresh_interval).
// Nothing is served until a complete map is held; while the manager is unreachable the pod keeps
// serving from its cache and retries registering every `retry_interval`.
//
// Graceful stop (Terminate): refuse new entities and assigns, stop every local entity (bounded by
// entity_termination_timeout), Unregister, end. With the manager unreachable the entities are
// still stopped; the manager later finds the pod dead and places its shards.
//
// Thread safety: a blueprint is a value; the group has one actor; the cache is shared (see
// assignment_cache.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/config.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>

namespace elfin::actors::sharding {

/// The blueprint name topology files use.
inline constexpr std::string_view kPodBlueprintName = "sharding.pod";

struct PodOptions {
  /// The cache this pod fills; the pod's entity groups read it. Empty: a new one.
  std::shared_ptr<AssignmentCache> cache;
  /// This process's incarnation; 0: drawn at random when the blueprint is made (kept across
  /// restarts of the actor, so a restarted actor is the same pod at a new endpoint).
  std::uint64_t incarnation = 0;
};

/// The pod's sharding group.
[[nodiscard]] Blueprint pod(PodOptions options = {});

/// Adds `sharding.pod`.
void register_blueprints(BlueprintRegistry& registry);

}  // namespace elfin::actors::sharding
