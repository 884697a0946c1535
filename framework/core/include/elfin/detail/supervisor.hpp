// Supervisor<C, K>: the typed GroupRuntime — actors by key, spawned on demand by the router's
// Outcome, the decoded config, and the exec function.
//
// Thread safety: `resolve` runs concurrently on senders' threads. Actors live in a map split into
// shards by key hash, each behind a spin lock held for one lookup, insert or erase. (A single
// shared_mutex was measured at ~40% of a spawn-heavy run on two workers, nearly all of it futex
// sleeps and wakes between lookups and spawns; a singleton group has one shard.) Each shard has a
// version, bumped under its lock whenever an actor is added or removed, so a sending actor's route
// cache (route_cache.hpp) can reuse its last lookup without the lock while the version stands.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <elfin/context.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/block_pool.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/map_router.hpp>
#include <elfin/messages.hpp>
#include <elfin/task.hpp>

namespace elfin::detail {

template <class C, class K>
class Supervisor final : public GroupRuntime {
 public:
  using Exec = std::function<Task<>(Context<C, K>)>;

  Supervisor(GroupInit init, GroupTraits traits, MapRouter<K> router, Exec exec)
      : GroupRuntime(std::move(init), traits),
        router_(std::move(router)),
        exec_(std::move(exec)),
        config_(std::make_shared<const C>()) {}

  void resolve(const Envelope& envelope, Targets& out) override {
    if (envelope.is<SubscribeToActorStatuses>()) {
      // Answered by the supervisor itself, not by an actor of the group.
      subscribe_statuses(envelope.sender());
      return out.absorb();
    }
    Outcome<K> outcome = router_.route(envelope);
    using Kind = typename Outcome<K>::Kind;
    switch (outcome.kind()) {
      case Kind::Unicast:
        return pick(outcome.key(), true, out);
      case Kind::GentleUnicast:
        return pick(outcome.key(), false, out);
      case Kind::Multicast:
        out.reserve(outcome.keys().size());
        for (const K& key : outcome.keys()) pick(key, true, out);
        return;
      case Kind::GentleMulticast:
        out.reserve(outcome.keys().size());
        for (const K& key : outcome.keys()) pick(key, false, out);
        return;
      case Kind::Broadcast:
        return broadcast(out);
      case Kind::Discard:
        return;
      case Kind::Default:
        if (default_is_broadcast(envelope)) broadcast(out);
        return;
    }
  }

  Result<void, ConfigError> apply_config(const AnyConfig& config) override {
    auto decoded = config.decode<C>();
    if (!decoded) return Err{std::move(decoded).error()};
    auto next = std::make_shared<const C>(std::move(*decoded));
    return apply_runtime_config(config, [&] {
      router_.update(next.get());
      std::atomic_store(&config_, std::move(next));
    });
  }
  ConfigReport check_config(const AnyConfig& config) const override {
    ConfigReport report;
    std::ignore = config.decode_reporting<C>(report, scope(), true);
    check_runtime_config(config, report);
    return report;
  }
  std::shared_ptr<const void> current_config() const override { return std::atomic_load(&config_); }

  /// The actor with `key`, started if `spawn` and there is none (nullptr otherwise).
  std::shared_ptr<ActorCell> actor(const K& key, bool spawn) {
    Targets found;
    pick(key, spawn, found);
    return found.empty() ? nullptr : found[0]->shared_from_this();
  }

  void stop_spawning() override {
    spawning_.store(false, std::memory_order_release);
    abandon_restarts();
  }

  std::size_t active_actors() const override {
    std::size_t n = 0;
    for (const Shard& shard : shards_) {
      std::lock_guard lock(shard.mu);
      n += shard.actors.size();
    }
    return n;
  }

  Task<> make_task(ActorCell& cell) override {
    return exec_(ActorCellAccess::make<Context<C, K>>(static_cast<KeyedCell<K>*>(&cell)));
  }

  void for_each_actor(const std::function<void(ActorCell&)>& f) override {
    for (Shard& shard : shards_) {
      std::lock_guard lock(shard.mu);
      for (const auto& [key, cell] : shard.actors) f(*cell);
    }
  }

  std::shared_ptr<ActorCell> successor(ActorCell& ended, const Envelope& envelope) override {
    const K& key = static_cast<KeyedCell<K>&>(ended).key();
    Outcome<K> outcome = router_.route(envelope);
    using Kind = typename Outcome<K>::Kind;
    const bool spawn = outcome.kind() == Kind::Unicast || outcome.kind() == Kind::Multicast;
    bool routed_here = false;
    switch (outcome.kind()) {
      case Kind::Unicast:
      case Kind::GentleUnicast:
        routed_here = outcome.key() == key;
        break;
      case Kind::Multicast:
      case Kind::GentleMulticast:
        routed_here = std::find(outcome.keys().begin(), outcome.keys().end(), key) != outcome.keys().end();
        break;
      case Kind::Broadcast:  // reaches the actors there are, starts none
      case Kind::Discard:
      case Kind::Default:
        break;
    }
    if (!routed_here) return nullptr;
    Targets found;
    pick(key, spawn, found);
    if (found.empty() || found[0] == &ended) return nullptr;
    return found[0]->shared_from_this();
  }

  void on_finished(ActorCell& cell) override {
    auto& keyed = static_cast<KeyedCell<K>&>(cell);
    Shard& shard = shard_of(keyed.key());
    std::lock_guard lock(shard.mu);
    auto it = shard.actors.find(keyed.key());
    if (it != shard.actors.end() && it->second.get() == &cell) {
      shard.actors.erase(it);
      shard.bump();
    }
  }

 private:
  static constexpr std::size_t kShards = std::is_same_v<K, Singleton> ? 1 : 32;
  struct Shard {
    mutable SpinLock mu;
    std::unordered_map<K, std::shared_ptr<ActorCell>, std::hash<K>, std::equal_to<K>,
                       PooledAllocator<std::pair<const K, std::shared_ptr<ActorCell>>>>
        actors;  // guarded by mu
    // Bumped under mu with every insert or erase; read without it by route caches. A cache hit
    // reads nothing of the map: an unchanged version only says no actor came or went since the
    // lookup the cache remembers.
    std::atomic<std::uint64_t> version{0};
    void bump() { version.store(version.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  };
  Shard& shard_of(const K& key) { return shards_[std::hash<K>{}(key) % kShards]; }

  void pick(const K& key, bool spawn, Targets& out) {
    Shard& shard = shard_of(key);
    // A unicast from an actor: its route cache may know the target already (route_cache.hpp).
    RouteCache* cache = out.empty() ? current_route_cache() : nullptr;
    if (cache != nullptr && cache->home == &shard && cache->version == shard.version.load(std::memory_order_acquire) &&
        static_cast<const KeyedCell<K>&>(*cache->cell).key() == key) {
      return out.push_borrowed(cache->cell.get(), *cache);
    }
    std::shared_ptr<ActorCell> spawned;
    {
      std::lock_guard lock(shard.mu);
      if (auto it = shard.actors.find(key); it != shard.actors.end()) {
        if (cache != nullptr) cache->fill(&shard, shard.version.load(std::memory_order_relaxed), it->second);
        return out.push(it->second);
      }
      if (!spawn || !spawning_.load(std::memory_order_acquire)) return;
      spawned = spawn_locked(shard, key);
    }
    // Started outside the shard lock: starting reports a status, and status subscriptions take
    // their lock before the shard locks.
    if (exec_) start_actor(*spawned);
    out.push(std::move(spawned));
  }

  void broadcast(Targets& out) {
    for (Shard& shard : shards_) {
      std::lock_guard lock(shard.mu);
      for (const auto& [key, cell] : shard.actors) out.push(cell);
    }
  }

  std::shared_ptr<ActorCell> spawn_locked(Shard& shard, const K& key) {
    // The cell with its control block, like the map's node, is recycled memory (block_pool.hpp).
    auto cell = std::allocate_shared<KeyedCell<K>>(PooledAllocator<KeyedCell<K>>{}, *this, key, traits().external);
    cell->set_mailbox_capacity(mailbox_capacity());
    cell->set_config(current_config());
    register_actor(system(), cell, group_no());
    if (exec_) {
      cell->task_ = exec_(ActorCellAccess::make<Context<C, K>>(cell.get()));
      // Not runnable until start_actor: a sender that finds it first only queues its message.
      cell->sched_.store(SchedState::Dead, std::memory_order_relaxed);
    }
    shard.actors.emplace(key, cell);
    shard.bump();
    return cell;
  }

  MapRouter<K> router_;
  Exec exec_;
  std::shared_ptr<const C> config_;  // accessed with std::atomic_load/store
  std::atomic<bool> spawning_{true};
  std::array<Shard, kShards> shards_;
};

}  // namespace elfin::detail
