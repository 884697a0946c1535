// The partition group's router: every protocols/raft message goes to the actor of its
// `partition` (created by the first one). ValidateConfig goes to the actor of `kValidatorKey`,
// which is no partition: it only checks configs, so a start or reload never creates a partition.
// The liveness actor (liveness.hpp) has a reserved key too: the pings of its peers reach it as
// RaftMessages of that partition, the registrations of quiesced partitions by their type.
// The placement table (raft.Placement) goes to the actor of `kPlacementKey`, likewise no partition.
#pragma once

#include <cstdint>

#include <elfin/map_router.hpp>

namespace elfin::actors::partition::internal {

/// The key of the group's config checker (partition ids are shard numbers, below 2^31).
inline constexpr std::uint64_t kValidatorKey = UINT64_MAX;
/// The key of the group's placement table (placement.hpp): raft.Placement and GetPlacement go to
/// it; its PlacementChanged goes to every running actor of the group.
inline constexpr std::uint64_t kPlacementKey = UINT64_MAX - 1;
/// The key of the node's liveness actor (liveness.hpp): its peers' pings are RaftMessages of this
/// partition; WatchLeader, Unwatch and WatchFollowers go to it.
inline constexpr std::uint64_t kLivenessKey = UINT64_MAX - 2;

[[nodiscard]] MapRouter<std::uint64_t> router();

}  // namespace elfin::actors::partition::internal
