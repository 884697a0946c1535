// AssignmentCache: what a pod knows about who owns each shard, shared by its sharding actor (the
// only writer) and the routers of its entity groups (readers, on any thread).
//
// Two sources, never mixed (Shardcake #135): the pod's *own* shards change only through the
// manager's AssignShards / UnassignShards, each stamped with an epoch, and the pod remembers per
// shard the highest epoch a command carried, refusing older ones (StaleEpoch). *Other* pods'
// entries come from the manager's map (GetAssignments, AssignmentsChanged); an entry of that map
// naming this pod is ignored, so a late notification can never give back a shard the pod already
// handed over.
//
// The pod serves nothing until it holds a complete map (`ready()`), and keeps routing from the
// cache while the manager is unreachable. While draining (a graceful stop) it owns nothing new.
//
// Entity hosts (the entity groups and singletons of this pod) register here, so an unassign can
// stop the entities of the shards it takes away before it is acknowledged, and an assign can
// start the singletons of the shards it brings.
//
// Groups that senders on other pods address by name (broadcast targets, entity groups followed
// by an owner hint) register their address here too; the pod's sharding actor answers
// LocateGroup from it, and senders remember what other pods answered (per pod incarnation: a
// group's address does not change while its process runs).
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
#include <elfin/result.hpp>

namespace elfin::actors::sharding {

/// Something running entities on this pod (an entity group). Called by the sharding actor,
/// which sends the termination message (elfin::Terminate) to the actors whose addresses it gets.
class EntityHost {
 public:
  virtual ~EntityHost() = default;
  /// The actors (raw addresses) of the entities of `shards` to stop now; they count as
  /// stopping from here on.
  virtual std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) = 0;
  /// How many entities of `shards` still run.
  [[nodiscard]] virtual std::size_t running(const std::set<std::uint32_t>& shards) const = 0;
  /// The actors of the entities of `shards` that still run (those that outlive
  /// entity_termination_timeout are killed). None by default.
  [[nodiscard]] virtual std::vector<std::uint64_t> running_actors(const std::set<std::uint32_t>& /*shards*/) const {
    return {};
  }
  /// The actors of the entities nothing was routed to for `max_idle` (to passivate).
  virtual std::vector<std::uint64_t> idle(std::chrono::nanoseconds max_idle) = 0;
  /// Whether messages are held for entities that stop or stopped, waiting for where to go (a
  /// pod that stopped lives on while they wait: they may wait for its shards' next owners).
  [[nodiscard]] virtual bool holding() const { return false; }
  /// `shards` became this pod's: the group addresses to send elfin::Ping to, which starts an
  /// actor that must run without being written to (a singleton). None by default.
  virtual std::vector<std::uint64_t> wake(const std::set<std::uint32_t>& /*shards*/) { return {}; }
};

/// Where a shard's messages go, as this pod sees it now.
struct Route {
  bool local = false;                                  ///< this pod owns the shard
  std::optional<protocols::sharding::PodEntry> owner;  ///< another pod owns it (none: unassigned, or not known yet)
  std::uint64_t epoch = 0;                             ///< the epoch this view is from
};

class AssignmentCache {
 public:
  /// Who this pod is; set once by the sharding actor before it registers.
  void set_self(protocols::sharding::PodRef self, std::uint64_t endpoint);
  [[nodiscard]] protocols::sharding::PodRef self() const;
  [[nodiscard]] std::uint64_t endpoint() const;

  /// Holds a complete map: only then is anything served.
  [[nodiscard]] bool ready() const;
  [[nodiscard]] bool draining() const;
  /// The epoch of the newest map or command seen.
  [[nodiscard]] std::uint64_t epoch() const;
  /// The epoch of the newest map (GetAssignments / AssignmentsChanged) applied.
  [[nodiscard]] std::uint64_t map_epoch() const;

  [[nodiscard]] Route route(std::uint32_t shard) const;
  [[nodiscard]] bool owns(std::uint32_t shard) const;
  [[nodiscard]] std::vector<std::uint32_t> owned() const;
  /// The epoch at which this pod was given `shard`, if it holds it.
  [[nodiscard]] std::optional<std::uint64_t> held_epoch(std::uint32_t shard) const;
  /// The answer a pod gives a sender for a shard it does not own.
  [[nodiscard]] protocols::sharding::NotOwner not_owner(std::uint32_t shard) const;
  /// Every pod of the newest map (for broadcasts and node selection).
  [[nodiscard]] std::vector<protocols::sharding::PodEntry> pods() const;

  // --- the sharding actor's side ----------------------------------------------------------
  /// Applies a map to other pods' entries; a map older than the one held is ignored. Returns
  /// whether it was applied.
  bool apply(const protocols::sharding::Assignments& map);
  /// AssignShards: WrongIncarnation, Draining or StaleEpoch, or the shards are this pod's.
  Result<Unit, protocols::sharding::ShardingError> assign(const protocols::sharding::PodRef& pod,
                                                          const std::vector<std::uint32_t>& shards,
                                                          std::uint64_t epoch);
  /// UnassignShards: WrongIncarnation or StaleEpoch, or the shards are no longer routed here
  /// (their entities still have to be stopped before the answer).
  Result<Unit, protocols::sharding::ShardingError> unassign(const protocols::sharding::PodRef& pod,
                                                            const std::vector<std::uint32_t>& shards,
                                                            std::uint64_t epoch);
  /// A graceful stop began: assigns are refused and nothing is owned any more.
  void start_draining();

  // --- unreachable pods ------------------------------------------------------------------
  /// A sender found `pod`'s node unreachable (from a router: never blocks on I/O).
  void note_unreachable(const protocols::sharding::PodRef& pod);
  /// The pods noted since the last call (the sharding actor reports them to the manager).
  [[nodiscard]] std::vector<protocols::sharding::PodRef> take_unreachable();

  // --- entity hosts ----------------------------------------------------------------------
  void add_host(std::weak_ptr<EntityHost> host);
  /// The actors of every host's entities of `shards`, to be sent the termination message.
  [[nodiscard]] std::vector<std::uint64_t> stop_entities(const std::set<std::uint32_t>& shards) const;
  /// The actors of every host's entities idle for `max_idle`.
  [[nodiscard]] std::vector<std::uint64_t> idle_entities(std::chrono::nanoseconds max_idle) const;
  [[nodiscard]] std::size_t running_entities(const std::set<std::uint32_t>& shards) const;
  /// The actors of every host's entities of `shards` that still run.
  [[nodiscard]] std::vector<std::uint64_t> running_entity_actors(const std::set<std::uint32_t>& shards) const;
  /// Whether some host holds messages for entities that stop or stopped.
  [[nodiscard]] bool holding_messages() const;
  /// The group addresses every host wants woken now that `shards` are this pod's.
  [[nodiscard]] std::vector<std::uint64_t> wake_hosts(const std::set<std::uint32_t>& shards) const;

  // --- groups addressed by name ------------------------------------------------------------
  /// A group of this pod's node that senders may address by `name` (LocateGroup).
  void add_group(std::string name, std::uint64_t addr);
  /// The address registered as `name` on this pod's node, 0 if none.
  [[nodiscard]] std::uint64_t group(const std::string& name) const;
  /// What `pod` answered to LocateGroup{name} (0: not asked yet, or it had none).
  [[nodiscard]] std::uint64_t remote_group(const protocols::sharding::PodRef& pod, const std::string& name) const;
  void remember_remote_group(const protocols::sharding::PodRef& pod, const std::string& name, std::uint64_t addr);

 private:
  [[nodiscard]] std::optional<protocols::sharding::ShardingError> check(const protocols::sharding::PodRef& pod,
                                                                        const std::vector<std::uint32_t>& shards,
                                                                        std::uint64_t epoch) const;
  [[nodiscard]] std::vector<std::shared_ptr<EntityHost>> hosts() const;

  mutable std::shared_mutex mutex_;
  protocols::sharding::PodRef self_;
  std::uint64_t endpoint_ = 0;
  bool ready_ = false;
  bool draining_ = false;
  std::uint64_t epoch_ = 0;
  protocols::sharding::Assignments map_;
  std::map<std::uint32_t, std::uint64_t> own_;         ///< shard -> epoch it was assigned at
  std::map<std::uint32_t, std::uint64_t> last_epoch_;  ///< shard -> newest command's epoch
  std::vector<std::weak_ptr<EntityHost>> hosts_;
  std::set<protocols::sharding::PodRef> unreachable_;
  std::map<std::string, std::uint64_t> groups_;
  std::map<std::pair<protocols::sharding::PodRef, std::string>, std::uint64_t> remote_groups_;
};

}  // namespace elfin::actors::sharding
