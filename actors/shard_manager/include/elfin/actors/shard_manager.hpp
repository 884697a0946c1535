// The shard manager (`sharding.manager` in topology files): the one authority on which pod owns
// each shard, in the mould of Shardcake's, usually alone on its node. With `replication_factor`
// above 1 it keeps each shard on that many distinct pods (a replica set, owner first) and the
// steps below apply to every replica: a replica added is an assign, one removed an unassign. Pods talk to it with the
// `sharding` protocol (elfin/protocols/sharding.hpp); it commands them through their sharding actors.
//
// One rebalance at a time, each in this order:
//   1. plan   elfin::assignment::plan_replicas over the registered pods and the current map (with
//             replication_factor 1, plan_rebalance: Shardcake's algorithm exactly);
//   2. ping   every pod the plan involves, in parallel, `ping_timeout`; moves touching a pod
//             that did not answer are dropped (its shards stay where they are);
//   3. unassign  the old owners stop those shards' entities and answer (`handoff_timeout`);
//             a shard whose unassign failed stays, and its pod gets nothing this round;
//   4. persist   the new map with its new epoch — before anything is assigned or answered;
//             a storage that fails holds the round here and retries (`persist_retry_interval`);
//   5. assign    the new owners, at the persisted epoch;
//   6. health    every pod that failed a step is checked; only a dead one is removed (its shards
//             orphaned, or short of a replica, and an immediate round places replacements); the
//             change is persisted;
//   7. notify    every pod gets AssignmentsChanged.
// Rounds run on the first Register (and whenever shards are unassigned or short of replicas), at once after an
// Unregister or a pod found dead, every `rebalance_interval`, and `rebalance_retry_interval` after
// a round with failures. While a pod is suspect (failed its last ping) regular rounds only place
// orphans. Every pod is also health-checked every `health_check_interval`, and whenever another
// pod reports it (ReportUnhealthyPod). A shard therefore moves only after its old owner
// acknowledged the unassign or was found dead, and is never assigned from a map that is not
// persisted.
//
// At start the manager loads the stored pods and map, persists them again under a higher epoch
// (so its commands outrank any a previous instance sent), pings every pod, drops the dead ones,
// and resends each live pod its shards (AssignShards is idempotent): live assignments do not move.
// A restarted manager has no connection to pods that dial it: for its first `reconnect_grace`
// a pod it cannot reach is a suspect, not dead, and the next pings find it once it reconnected.
//
// Thread safety: a blueprint is a value; the group has one actor.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <elfin/actors/shard_manager/config.hpp>
#include <elfin/actors/shard_manager/health_check.hpp>
#include <elfin/actors/shard_manager/storage.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/result.hpp>

namespace elfin::actors::shard_manager {

/// The blueprint name topology files use.
inline constexpr std::string_view kBlueprintName = "sharding.manager";

struct Options {
  /// Opens the storage for a config; empty: `storage.kind` decides (FileStorage or RedisStorage).
  std::function<Result<std::unique_ptr<AssignmentStorage>, std::string>(const Config&)> storage;
  /// Empty: DirectPingHealthCheck.
  std::shared_ptr<HealthCheck> health_check;
};

/// The manager group.
[[nodiscard]] Blueprint blueprint(Options options = {});

/// The storage `config.storage` names.
[[nodiscard]] Result<std::unique_ptr<AssignmentStorage>, std::string> open_storage(const Config& config);

/// Adds `sharding.manager`.
void register_blueprints(BlueprintRegistry& registry);

}  // namespace elfin::actors::shard_manager
