// Cluster singletons: one instance cluster-wide of a user's actor, run by the pod that owns the
// shard of the singleton's name.
//
//   topology.local("scheduler").mount(elfin::actors::sharding::singleton<SchedulerConfig>(
//       {.cache = cache, .name = "scheduler", .shard_function = "jump-xxh64/1:1024"},
//       scheduler_exec));   // elfin::Task<> scheduler_exec(elfin::Context<SchedulerConfig> ctx)
//
// Mount it on every pod node. The actor starts when this pod is assigned the shard (the pod's
// sharding actor wakes the group with elfin::Ping, which never reaches the user's code), not on
// a first message: a singleton runs even when nobody writes to it. It is stopped with the
// termination message when the shard is unassigned or the pod stops, and the unassign is
// acknowledged only once it ended (killed if still running after entity_termination_timeout, as
// entities are), so the manager never gives the shard to another pod while it runs: two never
// run at once. Between
// the stop and the start on the new owner no instance runs (the handoff gap).
//
// Messages to the group reach the actor only on the owning pod (elsewhere they are refused:
// NoRoute); to reach it from any node, front the group with a remote group whose node selector is
// `owner_node(cache, shard_function, [](const Envelope&) { return std::optional<std::string>{"scheduler"}; })`.
// The group registers itself in the cache under its topology name (a broadcast target, LocateGroup).
//
// Thread safety: a blueprint is a value; the router runs on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <elfin/actor_group.hpp>
#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/entity_registry.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/envelope.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/messages.hpp>
#include <elfin/singleton.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::actors::sharding {

struct SingletonOptions {
  /// The pod's cache (the one given to actors::sharding::pod).
  std::shared_ptr<AssignmentCache> cache;
  /// The singleton's name: its shard is the name's shard.
  std::string name;
  /// The cluster's shard function, as the pods' and the manager's config name it.
  std::string shard_function = "jump-xxh64/1:1024";
  /// Where the instance is listed with its owner token (tests read it); empty: a new one.
  std::shared_ptr<EntityRegistry> registry;
};

/// The singleton's side of the pod: its running instance (through the registry) and the group
/// to wake when its shard arrives.
class SingletonHost final : public EntityHost {
 public:
  SingletonHost(std::uint32_t shard, std::shared_ptr<EntityRegistry> registry)
      : shard_(shard), registry_(std::move(registry)) {}

  std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) override { return registry_->stop(shards); }
  [[nodiscard]] std::size_t running(const std::set<std::uint32_t>& shards) const override {
    return registry_->running(shards);
  }
  [[nodiscard]] std::vector<std::uint64_t> running_actors(const std::set<std::uint32_t>& shards) const override {
    return registry_->running_actors(shards);
  }
  std::vector<std::uint64_t> idle(std::chrono::nanoseconds) override { return {}; }  // never passivated
  std::vector<std::uint64_t> wake(const std::set<std::uint32_t>& shards) override {
    const std::uint64_t group = group_.load();
    if (group == 0 || !shards.contains(shard_)) return {};
    return {group};
  }
  /// The group's address, known once its first actor started (at system start).
  void set_group(std::uint64_t group) { group_.store(group); }
  [[nodiscard]] std::uint32_t shard() const { return shard_; }

 private:
  std::uint32_t shard_;
  std::shared_ptr<EntityRegistry> registry_;
  std::atomic<std::uint64_t> group_{0};
};

namespace detail {

template <class C, class F>
Task<> run_singleton(Context<C> ctx, std::shared_ptr<F> exec, std::shared_ptr<AssignmentCache> cache,
                     std::shared_ptr<SingletonHost> host, std::shared_ptr<EntityRegistry> registry, std::string name) {
  // Known first, checked second: an assign makes the shard this pod's first and wakes the group
  // second, so either this start sees the shard or the wake finds the group.
  host->set_group(ctx.group_addr().raw());
  cache->add_group(ctx.group(), ctx.group_addr().raw());
  const std::uint32_t shard = host->shard();
  if (!cache->owns(shard)) co_return;  // the start-up run, or a wake that came too late: not ours
  const std::uint64_t addr = ctx.addr().raw();
  if (!registry->add(name, shard, addr, OwnerToken{cache->self(), cache->held_epoch(shard).value_or(0)})) co_return;
  struct Listed {
    EntityRegistry* registry;
    const std::string* name;
    std::uint64_t addr;
    ~Listed() { registry->remove(*name, addr); }
  } listed{registry.get(), &name, addr};
  // Listed first, checked second (as for entities): an unassign either waits for this instance
  // or this instance sees the shard gone.
  if (!cache->owns(shard)) co_return;
  metrics::increment_counter("elfin_sharding_singleton_starts_total");
  co_await (*exec)(ctx);
}

}  // namespace detail

/// The group running the singleton `exec` (`Task<>(Context<C>)`) while this pod owns its shard.
template <class C = NoConfig, class F>
[[nodiscard]] Blueprint singleton(SingletonOptions options, F exec) {
  auto function = hashing::ShardFunction::parse(options.shard_function);
  if (!function)
    throw std::invalid_argument("actors::sharding::singleton: " + options.shard_function + ": bad shard function");
  if (options.name.empty()) throw std::invalid_argument("actors::sharding::singleton: the name must not be empty");
  auto shard = function->shard_of(options.name);
  if (!shard) throw std::invalid_argument("actors::sharding::singleton: " + options.name + ": no shard");
  auto cache = options.cache ? options.cache : std::make_shared<AssignmentCache>();
  auto registry = options.registry ? options.registry : std::make_shared<EntityRegistry>();
  auto host = std::make_shared<SingletonHost>(*shard, registry);
  cache->add_host(host);
  MapRouter<Singleton> router{[cache, shard = *shard](const Envelope& e) {
    using O = Outcome<Singleton>;
    // The start-up UpdateConfig starts it once everywhere, so the group learns its address.
    if (e.is<UpdateConfig>()) return O::Unicast(Singleton{});
    // The pod's wake: starts it where the shard is owned, never elsewhere.
    if (e.is<Ping>()) return cache->owns(shard) ? O::Unicast(Singleton{}) : O::GentleUnicast(Singleton{});
    if (e.vtable().is_system) return O::Default();
    return cache->owns(shard) ? O::Unicast(Singleton{}) : O::Discard();
  }};
  auto shared = std::make_shared<F>(std::move(exec));
  return ActorGroup()
      .config<C>()
      .router(std::move(router))
      .exec([shared, cache, host, registry, name = options.name](Context<C> ctx) {
        return detail::run_singleton<C, F>(ctx, shared, cache, host, registry, name);
      });
}

}  // namespace elfin::actors::sharding
