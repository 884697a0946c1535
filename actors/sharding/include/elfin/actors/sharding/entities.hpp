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
// afresh). One still running entity_termination_timeout later is killed (Context::kill) by the
// pod's sharding actor. An entity whose shard stops being owned while it starts never runs the
// user's code.
//
// A message that arrives while its entity is stopping is held by the helper (and so is every
// later one for that entity until the held ones went on, which keeps one sender's messages in
// order): once the entity stopped, the helper sends them on to its next incarnation — through
// the router while this pod owns the shard, else to the entity group of the shard's new owner,
// retried until one is known or `hold_timeout` passed. At most `max_held` wait per entity. A
// pod that stopped gracefully reads the map until they went on (pod_actor.cpp). A held request
// that goes nowhere (hold_timeout, or the group stops) fails as refused, so its sender retries.
//
// The entities named in `start_with_shard` exist whenever this pod owns their shard: started
// when the pod gets the shard (the pod's sharding actor wakes the group with elfin::Ping) and
// never passivated, as NoriKV's shard 0 exists from start-up.
//
// Thread safety: a blueprint is a value; the router runs on any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/entity_registry.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/delay.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/handle.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/logging.hpp>
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
  /// The name the group registers under for senders on other pods (LocateGroup), the same on
  /// every pod; empty: its topology name.
  std::string name;
  /// Messages held per entity while it stops; more are refused like a message for a shard not
  /// owned (0: none is held, all are refused).
  std::size_t max_held = 1000;
  /// How long held messages wait for the shard's next owner to be known before they are dropped.
  std::chrono::milliseconds hold_timeout{10'000};
  /// Entities that exist whenever this pod owns their shard: started as soon as the pod holds the
  /// shard (not on a first message) and never passivated — NoriKV's shard 0 (`{"0"}`).
  std::vector<std::string> start_with_shard;
};

/// An entity group's side of the pod: its entities (through the registry), and the group to
/// wake when the shard of an entity started with its shard arrives.
class EntityGroupHost final : public EntityHost {
 public:
  EntityGroupHost(std::shared_ptr<EntityRegistry> registry, std::vector<std::pair<std::string, std::uint32_t>> eager)
      : registry_(std::move(registry)), eager_(std::move(eager)) {
    for (const auto& [id, shard] : eager_) registry_->pin(id);
  }

  std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) override { return registry_->stop(shards); }
  [[nodiscard]] std::size_t running(const std::set<std::uint32_t>& shards) const override {
    return registry_->running(shards);
  }
  [[nodiscard]] std::vector<std::uint64_t> running_actors(const std::set<std::uint32_t>& shards) const override {
    return registry_->running_actors(shards);
  }
  std::vector<std::uint64_t> idle(std::chrono::nanoseconds max_idle) override { return registry_->idle(max_idle); }
  /// Only a running helper holds anything: a message routed to it after it ended was counted as
  /// held and refused.
  [[nodiscard]] bool holding() const override { return helper_running_.load() && registry_->holding(); }
  std::vector<std::uint64_t> wake(const std::set<std::uint32_t>& shards) override {
    const std::uint64_t group = group_.load();
    if (group == 0) return {};
    for (const auto& [id, shard] : eager_) {
      if (shards.contains(shard)) return {group};
    }
    return {};
  }
  /// The group's address, known once its helper started (at system start).
  void set_group(std::uint64_t group) {
    group_.store(group);
    helper_running_.store(true);
  }
  /// The helper ended (its group stops).
  void helper_ended() { helper_running_.store(false); }
  /// The entities started with their shard whose shard this pod owns now.
  [[nodiscard]] std::vector<std::string> owned_eager(const AssignmentCache& cache) const {
    std::vector<std::string> ids;
    for (const auto& [id, shard] : eager_) {
      if (cache.owns(shard)) ids.push_back(id);
    }
    return ids;
  }

 private:
  std::shared_ptr<EntityRegistry> registry_;
  std::vector<std::pair<std::string, std::uint32_t>> eager_;
  std::atomic<std::uint64_t> group_{0};
  std::atomic<bool> helper_running_{false};
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

/// The helper's clock for held messages: where they wait for their entity to stop or for an
/// owner to be known.
struct HoldTick {
  ELFIN_MESSAGE(sharding_entities, HoldTick);
};

/// What the helper needs of its group.
struct HelperParts {
  std::shared_ptr<AssignmentCache> cache;
  std::shared_ptr<EntityGroupHost> host;
  std::shared_ptr<EntityRegistry> registry;
  std::function<std::optional<std::string>(const Envelope&)> entity_id;
  std::function<std::optional<std::uint32_t>(const std::string&)> shard_of;
  std::string name;  ///< registered under this name (LocateGroup); empty: the topology name
  std::chrono::milliseconds hold_timeout{10'000};
  std::shared_ptr<std::atomic<bool>> started;
};

/// How often the helper looks again at what it holds.
inline constexpr std::chrono::milliseconds kHoldPoll{5};
/// The helper's mailbox takes every message the router hands it: the router counted each one as
/// held for its entity before the send, and a send refused for a full mailbox would leave that
/// count one too high (later messages for the entity would keep going through the helper, and a
/// pod stopping gracefully would wait for them). Unbounded is still bounded: the router hands it
/// at most `max_held` per stopping entity (counted until they went on), and otherwise only
/// ShardOwner requests and requests no entity is for, one per waiting requester.
inline constexpr std::size_t kHelperMailbox = std::numeric_limits<std::size_t>::max();

/// The messages the helper holds for entities that are stopping, each entity's in arrival order,
/// and where they go once it stopped: through the router to its next incarnation while this pod
/// owns the shard, else to the shard's owner's entity group (asked of the owner's sharding actor,
/// LocateGroup), retried until an owner is known or hold_timeout passed.
template <class C>
class Holds {
 public:
  Holds(Context<C, std::string> ctx, const HelperParts& parts) : ctx_(ctx), parts_(parts) {}
  Holds(const Holds&) = delete;
  Holds& operator=(const Holds&) = delete;
  /// The helper ends (its group stops): what it holds goes nowhere.
  ~Holds() {
    for (auto& [id, queue] : held_) {
      for (auto& envelope : queue.envelopes) give_up(id, envelope, "its entity group stopped");
    }
  }

  void hold(const std::string& id, Envelope envelope) {
    auto& queue = held_[id];
    if (queue.envelopes.empty()) queue.since = ctx_.now();
    queue.envelopes.push_back(std::move(envelope));
  }

  /// Sends on what can go now; true if something is still held.
  Task<bool> flush() {
    for (auto it = held_.begin(); it != held_.end();) {
      co_await flush(it->first, it->second);
      it = it->second.envelopes.empty() ? held_.erase(it) : std::next(it);
    }
    co_return !held_.empty();
  }

 private:
  struct Queue {
    std::deque<Envelope> envelopes;
    std::chrono::steady_clock::time_point since;
  };

  Task<> flush(const std::string& id, Queue& queue) {
    EntityRegistry& registry = *parts_.registry;
    if (registry.listed(id)) co_return;  // the entity has not stopped yet
    const auto shard = parts_.shard_of(id);
    while (!queue.envelopes.empty() && shard) {
      Envelope& envelope = queue.envelopes.front();
      if (parts_.cache->owns(*shard)) {
        registry.release(id, ::elfin::detail::EnvelopeAccess::block(envelope));
        if (!ctx_.try_forward_to(ctx_.group_addr(), envelope)) {
          registry.rehold(id);  // the shard moved meanwhile: the next look sends it on
          break;
        }
      } else {
        const Addr target = co_await owner_group(*shard);
        if (target.is_null() || !ctx_.try_forward_to(target, envelope)) break;
        registry.unhold(id);
      }
      metrics::increment_counter("elfin_sharding_held_messages_delivered_total");
      queue.envelopes.pop_front();
    }
    if (queue.envelopes.empty() || ctx_.now() - queue.since < parts_.hold_timeout) co_return;
    log::warn("sharding entities {}: {} messages held for entity {} found no owner within {} ms; dropped", ctx_.group(),
              queue.envelopes.size(), id, parts_.hold_timeout.count());
    metrics::increment_counter("elfin_sharding_held_messages_dropped_total", queue.envelopes.size());
    for (auto& envelope : queue.envelopes) give_up(id, envelope, "no owner of its shard was found within hold_timeout");
    queue.envelopes.clear();
  }

  /// A held message goes nowhere. A request among them reached no entity: it fails as one refused
  /// (Failed, which request_entity tries again), not as one an entity dropped (Ignored, which
  /// would say it may have been handled).
  void give_up(const std::string& id, Envelope& envelope, std::string_view why) {
    using ::elfin::detail::EnvelopeAccess;
    auto* block = EnvelopeAccess::block(envelope);
    if (EnvelopeAccess::obligated(envelope) && block->request) {
      EnvelopeAccess::discharge(envelope);
      block->request->fail(RequestError{RequestError::Failed, fmt::format("held for entity {}: {}", id, why)});
    }
    parts_.registry->unhold(id);
  }

  /// The entity group of the shard's owner, another pod; null while none is known.
  Task<Addr> owner_group(std::uint32_t shard) {
    const Route route = parts_.cache->route(shard);
    if (route.local || !route.owner || route.owner->endpoint == 0) co_return Addr{};
    const std::string& name = parts_.name.empty() ? ctx_.group() : parts_.name;
    if (const auto known = parts_.cache->remote_group(route.owner->pod, name); known != 0) co_return Addr{known};
    auto where = co_await ctx_.request_to(Addr{route.owner->endpoint}, protocols::sharding::LocateGroup{name})
                     .timeout(std::chrono::seconds{1});
    if (!where || *where == 0) co_return Addr{};
    parts_.cache->remember_remote_group(route.owner->pod, name, *where);
    co_return Addr{*where};
  }

  Context<C, std::string> ctx_;
  const HelperParts& parts_;
  std::map<std::string, Queue> held_;
};

/// The pod-side helper: registers the group by name, answers ShardOwner, starts the entities
/// started with their shard whose shards the pod held before the group's address was known, and
/// holds the messages routed to it while their entity stops.
template <class C>
Task<> run_helper(Context<C, std::string> ctx, HelperParts parts) {
  parts.cache->add_group(parts.name.empty() ? ctx.group() : parts.name, ctx.group_addr().raw());
  parts.started->store(true);
  ctx.set_mailbox_capacity(kHelperMailbox);
  // Known first, woken second: an assign makes a shard this pod's first and wakes the known
  // group second, so either this Ping finds the shard owned or the assign finds the group.
  parts.host->set_group(ctx.group_addr().raw());
  std::ignore = ctx.unbounded_send_to(ctx.group_addr(), Ping{});
  struct Running {
    EntityGroupHost* host;
    ~Running() { host->helper_ended(); }
  } running{parts.host.get()};
  Holds<C> holds(ctx, parts);
  bool ticking = false;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->template is<HoldTick>()) {
      ticking = false;
    } else if (auto id = parts.entity_id ? parts.entity_id(*envelope) : std::nullopt; id && !id->empty()) {
      holds.hold(*id, std::move(*envelope));
    } else {
      co_await handle(*envelope, [&](const protocols::sharding::ShardOwner& ask,
                                     ResponseToken<protocols::sharding::ShardOwner> token) {
        ctx.respond(std::move(token), shard_owner(*parts.cache, ask.shard));
      });
      continue;
    }
    if (co_await holds.flush() && !ticking) {
      ticking = true;
      ctx.attach(Delay(kHoldPoll, HoldTick{}));
    }
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
  auto shard_of = [function = *function](const std::string& id) -> std::optional<std::uint32_t> {
    auto shard = function.shard_of(id);
    if (!shard) return std::nullopt;
    return *shard;
  };
  std::vector<std::pair<std::string, std::uint32_t>> eager;
  for (const auto& id : options.start_with_shard) {
    auto shard = id.empty() ? std::nullopt : shard_of(id);
    if (!shard) throw std::invalid_argument("actors::sharding::entities: start_with_shard: '" + id + "': no shard");
    eager.emplace_back(id, *shard);
  }
  auto host = std::make_shared<EntityGroupHost>(registry, std::move(eager));
  cache->add_host(host);
  auto entity_id = std::move(options.entity_id);
  auto helper = std::make_shared<std::atomic<bool>>(false);
  const std::size_t max_held = options.max_held;
  detail::HelperParts parts{cache, host, registry, entity_id, shard_of, options.name, options.hold_timeout, helper};
  MapRouter<std::string> router{[cache, registry, host, shard_of, entity_id, helper, max_held](const Envelope& e) {
    using O = Outcome<std::string>;
    // The start-up UpdateConfig starts the helper (no entity runs yet); later ones reach all.
    if (e.is<UpdateConfig>() && !helper->load()) return O::Unicast(detail::kHelperKey);
    // The pod's wake (or the helper's at start) starts the entities started with their shard,
    // where their shard is owned; the runtime answers it, the user's code never sees it.
    if (e.is<Ping>()) {
      if (auto ids = host->owned_eager(*cache); !ids.empty()) return O::Multicast(std::move(ids));
      return O::Default();
    }
    if (e.vtable().is_system) return O::Default();
    if (e.is<protocols::sharding::ShardOwner>()) return O::Unicast(detail::kHelperKey);
    auto id = entity_id ? entity_id(e) : std::nullopt;
    if (!id || id->empty()) {
      // No entity is for it (an unknown entity type): a request is dropped by the helper, so its
      // sender learns at once (Ignored) instead of retrying a refusal until its send_timeout.
      if (e.kind() == MessageKind::Request) return O::Unicast(detail::kHelperKey);
      return O::Discard();
    }
    // While its entity stops, a message is held by the helper (and so is every later one, until
    // the held ones went on), whether or not the shard is still owned here.
    switch (registry->via(*id, ::elfin::detail::EnvelopeAccess::block(e), max_held)) {
      case EntityRegistry::Via::Hold:
        return O::Unicast(detail::kHelperKey);
      case EntityRegistry::Via::Refuse:
        return O::Discard();
      case EntityRegistry::Via::Entity:
        break;
    }
    auto shard = shard_of(*id);
    if (!shard || !cache->owns(*shard)) return O::Discard();
    return O::Unicast(std::move(*id));
  }};
  auto shared = std::make_shared<F>(std::move(exec));
  return ActorGroup()
      .config<C>()
      .router(std::move(router))
      .exec([shared, cache, registry, shard_of, parts](Context<C, std::string> ctx) {
        if (ctx.key().empty()) return detail::run_helper<C>(ctx, parts);
        const auto shard = shard_of(ctx.key()).value_or(0);
        return detail::run_entity<C, F>(ctx, shared, cache, registry, shard);
      });
}

}  // namespace elfin::actors::sharding
