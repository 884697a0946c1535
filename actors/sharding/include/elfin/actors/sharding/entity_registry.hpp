// EntityRegistry: the entities one entity group runs on this pod — for each, its shard, its
// actor's address, when a message was last routed to it, and its owner token (this pod's
// incarnation and the epoch its shard was held at when it started). The group's router touches
// it on every message, the entity's actor adds itself at start and removes itself at its end,
// and the pod's sharding actor asks it which entities to stop (unassign, graceful stop) or
// passivate (idle for entity_max_idle_time).
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
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
  /// A message is on its way to `id` (called by the router).
  void touch(const std::string& id);

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::optional<OwnerToken> token(const std::string& id) const;

  std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) override;
  [[nodiscard]] std::size_t running(const std::set<std::uint32_t>& shards) const override;
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
  std::map<std::string, Entry> entries_;
};

}  // namespace elfin::actors::sharding
