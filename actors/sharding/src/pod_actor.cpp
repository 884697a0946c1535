// The pod's sharding actor: registration, the manager's commands, the map, and graceful stop.
// Every request to the manager runs as a stream next to the mailbox and every wait is a Delay, so
// the actor always answers the manager's PingPod at once (the manager pings while it registers).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>

#include "internal_messages.hpp"

namespace elfin::actors::sharding {

namespace ps = protocols::sharding;

namespace {

using Ctx = Context<PodConfig>;
using namespace internal;

// How often a stop looks whether the entities it waits for are gone.
constexpr std::chrono::milliseconds kStopPoll{5};
/// How often a pod that stopped asks the manager for the map while its entity groups hold
/// messages for entities that stopped: unregistered, it is told of no change, and those messages
/// wait for their shards' next owners, which only the manager knows.
constexpr std::chrono::milliseconds kHeldPoll{50};

Task<FetchDone> fetch_task(Ctx ctx) {
  FetchDone done;
  auto answer = co_await ctx.request(ps::GetAssignments{});
  if (answer) {
    done.ok = true;
    done.assignments = std::move(answer).value();
  } else {
    done.detail = std::string(to_string(answer.error()));
  }
  co_return done;
}

Task<RegisterDone> register_task(Ctx ctx, ps::Register request) {
  RegisterDone done;
  auto answer = co_await ctx.request(std::move(request));
  if (!answer) {
    done.detail = std::string(to_string(answer.error()));
  } else if (!*answer) {
    done.refused = true;
    done.kind = answer->error().kind;
    done.detail = fmt::format("{}", answer->error());
  } else {
    done.ok = true;
    done.assignments = std::move(*answer).value().assignments;
  }
  co_return done;
}

Task<UnregisterDone> unregister_task(Ctx ctx, ps::PodRef pod) {
  UnregisterDone done;
  auto answer = co_await ctx.request(ps::Unregister{std::move(pod)});
  if (!answer) {
    done.detail = std::string(to_string(answer.error()));
  } else if (!*answer) {
    done.detail = fmt::format("{}", answer->error());
  }
  co_return done;
}

std::uint64_t random_incarnation() {
  std::random_device device;
  std::uint64_t value = 0;
  while (value == 0) value = (std::uint64_t{device()} << 32) ^ device();
  return value;
}

class Pod {
 public:
  Pod(Ctx ctx, std::shared_ptr<AssignmentCache> cache, std::uint64_t incarnation)
      : ctx_(ctx), cache_(std::move(cache)), incarnation_(incarnation) {}

  Task<> run() {
    // An invalid config leaves the pod inert (it registers nowhere) and says why to ValidateConfig.
    while (!validate(config()).empty()) {
      auto envelope = co_await ctx_.recv();
      if (!envelope) co_return;
      co_await handle(*envelope, this, &Pod::on_validate);
    }
    start();
    while (!done_) {
      auto envelope = co_await ctx_.recv();
      if (!envelope) break;
      co_await handle(*envelope, this, &Pod::on_ping, &Pod::on_assign, &Pod::on_unassign, &Pod::on_changed,
                      &Pod::on_fetched, &Pod::on_registered, &Pod::on_retry_start, &Pod::on_report_tick,
                      &Pod::on_refresh_tick, &Pod::on_backoff, &Pod::on_backoff_done, &Pod::on_locate,
                      &Pod::on_passivate_tick, &Pod::on_passivate_deadline, &Pod::on_stop_check, &Pod::on_stop_deadline,
                      &Pod::on_terminate, &Pod::on_unregistered, &Pod::on_held_poll, &Pod::on_validate,
                      &Pod::on_config_updated);
    }
  }

 private:
  struct Stop {
    std::set<std::uint32_t> shards;
    std::optional<ResponseToken<ps::UnassignShards>> token;  ///< none: the graceful stop
    bool killed = false;  ///< entity_termination_timeout passed: what still ran was killed
  };

  const PodConfig& config() const { return ctx_.config(); }

  void start() {
    ps::PodRef self = cache_->self();
    if (self.incarnation == 0) {
      self.address = config().address.empty() ? fmt::format("node-{}", ctx_.addr().node_no()) : config().address;
      self.incarnation = incarnation_;
    }
    // A restarted actor is the same pod (same identity) at a new endpoint.
    cache_->set_self(self, ctx_.addr().raw());
    refresh_ = ctx_.attach(Interval(RefreshTick{}));
    refresh_->start(config().refresh_interval);
    // Unreachable pods are noted by routers and reported from here (routers never send).
    report_ = ctx_.attach(Interval(ReportTick{}));
    report_->start(std::min(config().unhealthy_report_interval, std::chrono::milliseconds{100}));
    // Idle entities are found within a quarter of entity_max_idle_time after they became idle.
    passivate_ = ctx_.attach(Interval(PassivateTick{}));
    passivate_->start(std::max(config().entity_max_idle_time / 4, std::chrono::milliseconds{1}));
    publish();
    fetch();
  }

  void fetch() {
    fetching_ = true;
    ctx_.attach(Stream::once(fetch_task(ctx_)));
  }

  void register_self() {
    ps::Register request{cache_->self(), cache_->endpoint(), config().version, config().shard_function};
    ctx_.attach(Stream::once(register_task(ctx_, std::move(request))));
  }

  void retry_later() {
    if (retry_pending_) return;
    retry_pending_ = true;
    ctx_.attach(Delay(config().retry_interval, RetryStart{}));
  }

  void on_ping(const ps::PingPod&, ResponseToken<ps::PingPod> token) { ctx_.respond(std::move(token), cache_->self()); }

  void on_changed(const ps::AssignmentsChanged& changed) { on_map(changed.assignments); }

  void on_retry_start(const RetryStart&) {
    retry_pending_ = false;
    if (!draining_ && !registered_) fetch();
  }

  void on_report_tick(const ReportTick&) { report_unreachable(); }

  void on_refresh_tick(const RefreshTick&) {
    // A command newer than the map means a notification is late or lost: ask for the map.
    if (!fetching_ && cache_->epoch() > cache_->map_epoch()) {
      log::info("sharding pod {}: map at epoch {}, commands at {}: fetching it", cache_->self(), cache_->map_epoch(),
                cache_->epoch());
      fetch();
    }
  }

  void on_backoff(const ps::Backoff& backoff, ResponseToken<ps::Backoff> token) {
    const std::uint64_t id = ++next_op_;
    backoffs_.emplace(id, std::move(token));
    ctx_.attach(Delay(std::chrono::milliseconds{backoff.delay_ms}, BackoffDone{id}));
  }

  void on_locate(const ps::LocateGroup& locate, ResponseToken<ps::LocateGroup> token) {
    ctx_.respond(std::move(token), cache_->group(locate.name));
  }

  void on_backoff_done(const BackoffDone& waited) {
    if (auto it = backoffs_.find(waited.op); it != backoffs_.end()) {
      ctx_.respond(std::move(it->second), Unit{});
      backoffs_.erase(it);
    }
  }

  void on_passivate_tick(const PassivateTick&) { passivate(); }
  void on_passivate_deadline(const PassivateDeadline& deadline) {
    auto it = passivating_.find(deadline.op);
    if (it == passivating_.end()) return;
    // An actor that ended has a dead address: killing it does nothing.
    std::size_t killed = 0;
    for (auto actor : it->second) killed += ctx_.kill(Addr{actor}, "entity_termination_timeout") ? 1 : 0;
    passivating_.erase(it);
    if (killed == 0) return;
    log::warn("sharding pod {}: {} passivated entities still running after entity_termination_timeout; killing them",
              cache_->self(), killed);
    metrics::increment_counter("elfin_sharding_entity_kills_total", killed);
  }
  void on_stop_check(const StopCheck& check) { poll_stop(check.op, false); }
  void on_stop_deadline(const StopDeadline& deadline) { poll_stop(deadline.op, true); }

  void on_terminate(const Terminate& terminate) {
    if (terminate.force_close) {
      done_ = true;
    } else {
      begin_drain();
    }
  }

  void on_unregistered(const UnregisterDone& unregistered) {
    if (!unregistered.detail.empty()) {
      log::warn("sharding pod {}: unregister failed ({}); the manager will find the pod gone", cache_->self(),
                unregistered.detail);
    }
    end_drain();
  }

  void on_held_poll(const HeldPoll&) {
    // After send_timeout every sender of a held request gave up: the pod waits no longer.
    if (!cache_->holding_messages() || ctx_.now() - drained_at_ >= config().send_timeout) {
      done_ = true;
      return;
    }
    if (!fetching_) fetch();
    ctx_.attach(Delay(kHeldPoll, HeldPoll{}));
  }

  void on_config_updated(const ConfigUpdated&) {
    // A reload changes the timers; the identity and the shard function stay (a new address
    // or function is a new pod: restart it).
    if (refresh_) refresh_->set_period(config().refresh_interval);
    if (report_) report_->set_period(std::min(config().unhealthy_report_interval, std::chrono::milliseconds{100}));
    if (passivate_) passivate_->set_period(std::max(config().entity_max_idle_time / 4, std::chrono::milliseconds{1}));
  }

  void on_validate(const ValidateConfig& request, ResponseToken<ValidateConfig> token) {
    ctx_.respond(std::move(token), config_verdict<PodConfig>(request.config));
  }

  void on_fetched(const FetchDone& fetched) {
    fetching_ = false;
    if (!fetched.ok) {
      if (drained_) return;  // asked again at the next HeldPoll
      log::warn("sharding pod {}: cannot read the map from the manager ({}); retrying", cache_->self(), fetched.detail);
      if (!registered_) retry_later();
      return;
    }
    on_map(fetched.assignments);
    if (!registered_ && !registering_ && !draining_) {
      registering_ = true;
      register_self();
    }
  }

  void on_registered(const RegisterDone& registered) {
    registering_ = false;
    if (!registered.ok) {
      log::warn("sharding pod {}: register {}: {}; retrying", cache_->self(), registered.refused ? "refused" : "failed",
                registered.detail);
      retry_later();
      return;
    }
    registered_ = true;
    registered_epoch_ = registered.assignments.epoch;
    log::info("sharding pod {}: registered", cache_->self());
    on_map(registered.assignments);
  }

  void on_map(const ps::Assignments& map) {
    if (!cache_->apply(map)) return;
    publish();
    // A map that no longer lists a registered pod means the manager found it dead: its shards
    // are someone else's now, so it serves none of them and joins again.
    // (A register changes the pods, not the epoch: only a newer map can have dropped this pod.)
    if (registered_ && !draining_ && map.epoch > registered_epoch_) {
      const ps::PodRef self = cache_->self();
      const bool listed =
          std::any_of(map.pods.begin(), map.pods.end(), [&](const ps::PodEntry& e) { return e.pod == self; });
      if (!listed) {
        log::warn("sharding pod {}: the manager's map at epoch {} no longer lists this pod; registering again", self,
                  map.epoch);
        const auto owned = cache_->owned();
        std::ignore = cache_->unassign(self, owned, map.epoch);
        begin_stop({owned.begin(), owned.end()}, std::nullopt, false);
        registered_ = false;
        retry_later();
      }
    }
  }

  void on_assign(const ps::AssignShards& assign, ResponseToken<ps::AssignShards> token) {
    auto result = cache_->assign(assign.pod, assign.shards, assign.epoch);
    if (!result) {
      log::warn("sharding pod {}: assign of {} shards at epoch {} refused: {}", cache_->self(), assign.shards.size(),
                assign.epoch, result.error());
    }
    const bool assigned = result.ok();
    ctx_.respond(std::move(token), std::move(result));
    publish();
    // Singletons of these shards start now, not on a first message: they run unasked.
    if (assigned) {
      for (auto group : cache_->wake_hosts({assign.shards.begin(), assign.shards.end()})) {
        std::ignore = ctx_.unbounded_send_to(Addr{group}, Ping{});
      }
    }
  }

  void on_unassign(const ps::UnassignShards& unassign, ResponseToken<ps::UnassignShards> token) {
    auto result = cache_->unassign(unassign.pod, unassign.shards, unassign.epoch);
    if (!result) {
      ctx_.respond(std::move(token), std::move(result));
      return;
    }
    publish();
    // Acknowledged once the shards' entities have stopped: until then the manager gives them to
    // nobody.
    begin_stop({unassign.shards.begin(), unassign.shards.end()}, std::move(token), false);
  }

  void begin_drain() {
    if (draining_) return;
    draining_ = true;
    log::info("sharding pod {}: stopping: refusing new entities, stopping local ones", cache_->self());
    const auto owned = cache_->owned();
    cache_->start_draining();
    publish();
    std::set<std::uint32_t> shards(owned.begin(), owned.end());
    begin_stop(std::move(shards), std::nullopt, true);
  }

  void begin_stop(std::set<std::uint32_t> shards, std::optional<ResponseToken<ps::UnassignShards>> token, bool drain) {
    const std::uint64_t op = ++next_op_;
    terminate(cache_->stop_entities(shards));
    stops_.emplace(op, Stop{std::move(shards), std::move(token)});
    if (drain) drain_op_ = op;
    ctx_.attach(Delay(config().entity_termination_timeout, StopDeadline{op}));
    poll_stop(op, false);
  }

  void poll_stop(std::uint64_t op, bool deadline) {
    auto it = stops_.find(op);
    if (it == stops_.end()) return;
    Stop& pending = it->second;
    const std::size_t running = cache_->running_entities(pending.shards);
    if (running > 0) {
      if (deadline && !pending.killed) {
        // They ignored the termination message: killed at their next suspension. One busy in a
        // synchronous loop stops only when it suspends, and the stop waits for it (I5 first).
        pending.killed = true;
        const auto actors = cache_->running_entity_actors(pending.shards);
        log::warn("sharding pod {}: {} entities still running after entity_termination_timeout; killing them",
                  cache_->self(), actors.size());
        metrics::increment_counter("elfin_sharding_entity_kills_total", actors.size());
        for (auto actor : actors) std::ignore = ctx_.kill(Addr{actor}, "entity_termination_timeout");
      }
      // The checks go on (one chain of them per stop) until the last entity is gone.
      if (!deadline) ctx_.attach(Delay(kStopPoll, StopCheck{op}));
      return;
    }
    Stop stop = std::move(it->second);
    stops_.erase(it);
    if (stop.token) ctx_.respond(std::move(*stop.token), Unit{});
    if (op == drain_op_) {
      if (registered_) {
        ctx_.attach(Stream::once(unregister_task(ctx_, cache_->self())));
      } else {
        end_drain();
      }
    }
  }

  /// The graceful stop is over: the pod ends once its entity groups hold nothing more. What they
  /// hold waits for the shards' next owners, known to this pod only from maps it asks for.
  void end_drain() {
    drained_ = true;
    drained_at_ = ctx_.now();
    if (cache_->holding_messages()) {
      log::info("sharding pod {}: stopped; reading the map until the messages held for its entities went on",
                cache_->self());
    }
    on_held_poll(HeldPoll{});
  }

  /// Sends the termination message to entity actors; they finish what they are handling first.
  void terminate(const std::vector<std::uint64_t>& actors) {
    for (auto actor : actors) std::ignore = ctx_.unbounded_send_to(Addr{actor}, Terminate{});
  }

  /// Tells the manager about pods senders could not reach, each at most once per
  /// unhealthy_report_interval (per target, not one timestamp for all as Shardcake).
  void report_unreachable() {
    const auto now = std::chrono::steady_clock::now();
    for (const auto& pod : cache_->take_unreachable()) {
      auto& last = reported_[pod];
      if (last != std::chrono::steady_clock::time_point{} && now - last < config().unhealthy_report_interval) continue;
      last = now;
      log::info("sharding pod {}: {} is unreachable; reporting it to the manager", cache_->self(), pod);
      std::ignore = ctx_.try_send(ps::ReportUnhealthyPod{pod, cache_->self()});
    }
  }

  void passivate() {
    const auto idle = cache_->idle_entities(config().entity_max_idle_time);
    if (idle.empty()) return;
    metrics::increment_counter("elfin_sharding_entity_passivations_total", idle.size());
    terminate(idle);
    const std::uint64_t op = ++next_op_;
    passivating_.emplace(op, idle);
    ctx_.attach(Delay(config().entity_termination_timeout, PassivateDeadline{op}));
  }

  void publish() {
    metrics::set_gauge("elfin_sharding_pod_owned_shards", static_cast<double>(cache_->owned().size()));
    metrics::set_gauge("elfin_sharding_pod_map_epoch", static_cast<double>(cache_->map_epoch()));
  }

  Ctx ctx_;
  std::shared_ptr<AssignmentCache> cache_;
  std::uint64_t incarnation_;
  std::optional<Interval<RefreshTick>> refresh_;
  std::optional<Interval<PassivateTick>> passivate_;
  std::optional<Interval<ReportTick>> report_;
  std::map<ps::PodRef, std::chrono::steady_clock::time_point> reported_;
  bool registered_ = false;
  bool registering_ = false;
  bool fetching_ = false;
  bool retry_pending_ = false;
  bool draining_ = false;
  bool drained_ = false;  ///< the graceful stop is over: only held messages keep the pod
  std::chrono::steady_clock::time_point drained_at_;
  bool done_ = false;
  std::uint64_t registered_epoch_ = 0;
  std::uint64_t next_op_ = 0;
  std::uint64_t drain_op_ = 0;
  std::map<std::uint64_t, Stop> stops_;
  std::map<std::uint64_t, std::vector<std::uint64_t>> passivating_;  ///< op -> the actors passivated
  std::map<std::uint64_t, ResponseToken<ps::Backoff>> backoffs_;
};

Task<> pod_exec(Ctx ctx, std::shared_ptr<AssignmentCache> cache, std::uint64_t incarnation) {
  Pod pod(ctx, std::move(cache), incarnation);
  co_await pod.run();
}

}  // namespace

Blueprint pod(PodOptions options) {
  auto cache = options.cache ? options.cache : std::make_shared<AssignmentCache>();
  const std::uint64_t incarnation = options.incarnation != 0 ? options.incarnation : random_incarnation();
  return ActorGroup()
      .config<PodConfig>()
      .router(MapRouter<Singleton>([](const Envelope& e) {
        // Terminate reaches the actor (a graceful stop), but never starts it.
        if (e.is<Ping>() || e.is<Terminate>()) return Outcome<Singleton>::GentleUnicast(Singleton{});
        return Outcome<Singleton>::Unicast(Singleton{});
      }))
      .termination_policy(TerminationPolicy::manually())
      .restart_policy(RestartPolicy::on_failure(RestartParams{std::chrono::milliseconds{100}, std::chrono::seconds{5}}))
      .exec([cache, incarnation](Ctx ctx) { return pod_exec(ctx, cache, incarnation); });
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kPodBlueprintName), pod(),
                             "a pod's sharding actor: registers with the shard manager, holds the assignment cache");
}

}  // namespace elfin::actors::sharding
