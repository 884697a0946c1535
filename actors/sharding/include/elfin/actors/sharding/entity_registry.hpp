// EntityRegistry: the entities one entity group runs on this pod — for each, its shard, its
// actor's address, when a message was last routed to it, and its owner token (this pod's
// incarnation and the epoch its shard was held at when it started). The group's router touches
// it on every message, the entity's actor adds itself at start and removes itself at its end,
// and the pod's sharding actor asks it which entities to stop (unassign, graceful stop) or
// passivate (idle for entity_max_idle_time). It also counts, per entity, the messages its group
// holds while the entity stops, so the router keeps sending one sender's messages behind them.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <elfin/actors/sharding/assignment_cache.hpp>

namespace elfin::actors::sharding {

/// Who ran an entity: never two at once cluster-wide (the sharding study's I5).
struct OwnerToken {
  protocols::sharding::PodRef pod;
  std::uint64_t epoch = 0;
  friend bool operator==(const OwnerToken&, const OwnerToken&) = default;
};

class EntityRegistry final : public EntityHost {
 public:
  using Clock = std::chrono::steady_clock;

  /// An entity's actor started; false if `id` already runs (an actor is one per key, so this
  /// would be a bug).
  bool add(const std::string& id, std::uint32_t shard, std::uint64_t addr, OwnerToken token);
  /// The actor `addr` of `id` ended.
  void remove(const std::string& id, std::uint64_t addr);
  /// `id` is never idle (an entity started with its shard).
  void pin(const std::string& id);

  // --- messages held while an entity stops (the group's router and helper, entities.hpp) ------
  /// Where the router sends a message for `id`: to the entity (started if needed), to the
  /// group's helper to be held (the entity is stopping, or messages for it are held already, so
  /// this one queues behind them), or nowhere (`max_held` are held already).
  enum class Via : std::uint8_t { Entity, Hold, Refuse };
  /// `envelope` identifies the message (its block): one the helper released goes to the entity.
  Via via(const std::string& id, const void* envelope, std::size_t max_held);
  /// The helper sends a held message on through the router: `envelope` goes to the entity.
  void release(const std::string& id, const void* envelope);
  /// A released message did not reach the entity: held again (at the front of the helper's queue).
  void rehold(const std::string& id);
  /// A held message left another way (forwarded to the shard's new owner, or given up).
  void unhold(const std::string& id);
  /// Whether messages for some entity are held (not released yet).
  [[nodiscard]] bool holding() const override;
  /// Whether an actor of `id` is listed (it runs or is stopping).
  [[nodiscard]] bool listed(const std::string& id) const;
  /// Whether `id`'s entity is stopping (asked to stop, not gone yet).
  [[nodiscard]] bool stopping(const std::string& id) const;

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::optional<OwnerToken> token(const std::string& id) const;

  std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) override;
  [[nodiscard]] std::size_t running(const std::set<std::uint32_t>& shards) const override;
  [[nodiscard]] std::vector<std::uint64_t> running_actors(const std::set<std::uint32_t>& shards) const override;
  std::vector<std::uint64_t> idle(std::chrono::nanoseconds max_idle) override;

 private:
  struct Entry {
    std::uint32_t shard = 0;
    std::uint64_t addr = 0;
    OwnerToken token;
    Clock::time_point last{};
    bool stopping = false;
  };
  mutable std::mutex mutex_;
  struct Hold {
    std::size_t held = 0;            ///< routed to the helper and not released yet
    std::set<const void*> released;  ///< released, on their way through the router
  };
  std::map<std::string, Entry> entries_;
  std::set<std::string> pinned_;
  std::map<std::string, Hold> holds_;
};

}  // namespace elfin::actors::sharding
