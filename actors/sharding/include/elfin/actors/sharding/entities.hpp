// Sharded entity groups: a user's entity actor, one per entity id, run on the pod that owns the
// id's shard.
//
//   auto cache = std::make_shared<elfin::actors::sharding::AssignmentCache>();
//   topology.local("sharding.pod").mount(elfin::actors::sharding::pod({cache}));
//   topology.local("carts").mount(elfin::actors::sharding::entities<CartConfig>(
//       {.cache = cache, .shard_function = "jump-xxh64/1:1024",
//        .entity_id = [](const elfin::Envelope& e) { ... the cart id the message is for ... }},
//       cart_exec));   // elfin::Task<> cart_exec(elfin::Context<CartConfig, std::string> ctx)
//
// The group's router maps a message to its entity id (`entity_id`), the id to its shard (the
// cluster's shard function), and delivers it to the entity's actor (key = the id, started on its
// first message) only if this pod owns the shard now. A message for a shard this pod does not own
// is refused (the send reports NoRoute, a request fails at once), so the sender retries — see
// sharding/send.hpp — and no message is ever handled by an entity whose shard moved away.
//
// A message no entity of the group is for (`entity_id` gives none: an unknown entity type) is
// refused too, except a request: that goes to the helper, which drops it, so its sender is
// answered Ignored at once — request_entity gives Refused rather than retrying until
// send_timeout.
//
// Why a message was refused: a ShardOwner request sent like the entity's messages is answered by
// the group's pod-side helper (the actor of the empty key, never an entity), Ok if this pod owns
// the shard now, else a ShardingError of kind NotOwner with this pod's epoch and owner hint —
// what request_entity follows to the owner. The helper also registers the group in the cache
// under its topology name (LocateGroup), so senders on other pods can address this pod's group.
// It starts with the group (the start-up UpdateConfig).
//
// An entity is stopped with the termination message (elfin::Terminate: its mailbox closes, what
// is queued is handled, its exec returns) when its shard is unassigned, when the pod stops, and
// when nothing was routed to it for entity_max_idle_time (passivation; the next message starts it
// afresh). A message that arrives while its entity is stopping is refused like one for a shard
// not owned. An entity whose shard stops being owned while it starts never runs the user's code.
//
// Thread safety: a blueprint is a value; the router runs on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/entity_registry.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/envelope.hpp>
#include <elfin/handle.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::actors::sharding {

struct EntityOptions {
  /// The pod's cache (the one given to actors::sharding::pod).
  std::shared_ptr<AssignmentCache> cache;
  /// The cluster's shard function, as the pods' and the manager's config name it.
  std::string shard_function = "jump-xxh64/1:1024";
  /// The entity a message is for; nullopt (or an empty id): not an entity message, dropped.
  std::function<std::optional<std::string>(const Envelope&)> entity_id;
  /// Where the group's entities are listed (tests read owner tokens from it); empty: a new one.
  std::shared_ptr<EntityRegistry> registry;
};

namespace detail {

/// The key of an entity group's pod-side helper: no entity has an empty id.
inline const std::string kHelperKey{};

/// What a pod answers about `shard`: Ok if it owns it now, else NotOwner with its view.
inline Result<Unit, protocols::sharding::ShardingError> shard_owner(const AssignmentCache& cache, std::uint32_t shard) {
  namespace ps = protocols::sharding;
  if (cache.owns(shard)) return Unit{};
  ps::NotOwner view = cache.not_owner(shard);
  std::string detail = view.owner
                           ? fmt::format("shard {} is owned by {} at epoch {}", shard, view.owner->pod, view.epoch)
                           : fmt::format("shard {} has no known owner at epoch {}", shard, view.epoch);
  return Err{ps::ShardingError{ps::ShardingErrorKind::NotOwner, std::move(detail), std::move(view)}};
}

/// The pod-side helper: registers the group by name, answers ShardOwner.
template <class C>
Task<> run_helper(Context<C, std::string> ctx, std::shared_ptr<AssignmentCache> cache,
                  std::shared_ptr<std::atomic<bool>> started) {
  cache->add_group(ctx.group(), ctx.group_addr().raw());
  started->store(true);
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const protocols::sharding::ShardOwner& ask,
                                   ResponseToken<protocols::sharding::ShardOwner> token) {
      ctx.respond(std::move(token), shard_owner(*cache, ask.shard));
    });
  }
}

template <class C, class F>
Task<> run_entity(Context<C, std::string> ctx, std::shared_ptr<F> exec, std::shared_ptr<AssignmentCache> cache,
                  std::shared_ptr<EntityRegistry> registry, std::uint32_t shard) {
  const std::string& id = ctx.key();  // the cell's key, alive as long as this actor
  const std::uint64_t addr = ctx.addr().raw();
  if (!registry->add(id, shard, addr, OwnerToken{cache->self(), cache->held_epoch(shard).value_or(0)})) co_return;
  struct Listed {
    EntityRegistry* registry;
    const std::string* id;
    std::uint64_t addr;
    ~Listed() { registry->remove(*id, addr); }
  } listed{registry.get(), &id, addr};
  // Listed first, checked second: an unassign removes the shard first and looks at the list
  // second, so either it waits for this entity or this entity sees the shard gone.
  if (!cache->owns(shard)) co_return;
  metrics::increment_counter("elfin_sharding_entity_starts_total");
  co_await (*exec)(ctx);
}

}  // namespace detail

/// The sharded group of the entity actors `exec` runs (`Task<>(Context<C, std::string>)`).
template <class C = NoConfig, class F>
[[nodiscard]] Blueprint entities(EntityOptions options, F exec) {
  auto function = hashing::ShardFunction::parse(options.shard_function);
  if (!function)
    throw std::invalid_argument("actors::sharding::entities: " + options.shard_function + ": bad shard function");
  auto cache = options.cache ? options.cache : std::make_shared<AssignmentCache>();
  auto registry = options.registry ? options.registry : std::make_shared<EntityRegistry>();
  cache->add_host(registry);
  auto shard_of = [function = *function](const std::string& id) -> std::optional<std::uint32_t> {
    auto shard = function.shard_of(id);
    if (!shard) return std::nullopt;
    return *shard;
  };
  auto entity_id = std::move(options.entity_id);
  auto helper = std::make_shared<std::atomic<bool>>(false);
  MapRouter<std::string> router{[cache, registry, shard_of, entity_id, helper](const Envelope& e) {
    using O = Outcome<std::string>;
    // The start-up UpdateConfig starts the helper (no entity runs yet); later ones reach all.
    if (e.is<UpdateConfig>() && !helper->load()) return O::Unicast(detail::kHelperKey);
    if (e.vtable().is_system) return O::Default();
    if (e.is<protocols::sharding::ShardOwner>()) return O::Unicast(detail::kHelperKey);
    auto id = entity_id ? entity_id(e) : std::nullopt;
    if (!id || id->empty()) {
      // No entity is for it (an unknown entity type): a request is dropped by the helper, so its
      // sender learns at once (Ignored) instead of retrying a refusal until its send_timeout.
      if (e.kind() == MessageKind::Request) return O::Unicast(detail::kHelperKey);
      return O::Discard();
    }
    auto shard = shard_of(*id);
    if (!shard || !cache->owns(*shard)) return O::Discard();
    registry->touch(*id);
    return O::Unicast(std::move(*id));
  }};
  auto shared = std::make_shared<F>(std::move(exec));
  return ActorGroup()
      .config<C>()
      .router(std::move(router))
      .exec([shared, cache, registry, shard_of, helper](Context<C, std::string> ctx) {
        if (ctx.key().empty()) return detail::run_helper<C>(ctx, cache, helper);
        const auto shard = shard_of(ctx.key()).value_or(0);
        return detail::run_entity<C, F>(ctx, shared, cache, registry, shard);
      });
}

}  // namespace elfin::actors::sharding
