// The shard manager's actor (see shard_manager.hpp for the workflow it carries out).
//
// Everything the manager waits for — pings, unassigns, assigns — runs as a Stream next to its
// mailbox, and every wait has a Delay, so the actor never blocks on a pod: it keeps answering
// GetAssignments and Register while a round is in flight. Only the storage is called inline
// (persisting is the point where nothing may happen before it is done).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/actors/shard_manager.hpp>
#include <elfin/assignment/assignment_map.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance.hpp>
#include <elfin/assignment/replica_map.hpp>
#include <elfin/assignment/replica_rebalance.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/context.hpp>
#include <elfin/delay.hpp>
#include <elfin/handle.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/interval.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/stream.hpp>
#include <elfin/task.hpp>
#include <elfin/telemetry.hpp>

#include "internal_messages.hpp"
#include "pod_requests.hpp"
#include "round.hpp"

namespace elfin::actors::shard_manager {

namespace ps = protocols::sharding;

namespace {

using assignment::PodId;
using assignment::ReplicaMap;
using assignment::ReplicaMove;
using assignment::ReplicaPlan;
using assignment::RoundKind;
using assignment::ShardId;
using ps::PodEntry;
using ps::PodRef;
using ps::ShardingError;
using ps::ShardingErrorKind;
using namespace internal;
using Ctx = ManagerContext;
using Clock = std::chrono::steady_clock;

PodId to_id(const PodRef& ref) { return PodId{ref.address, ref.incarnation}; }

// --- the manager ------------------------------------------------------------------------------

class Manager {
 public:
  Manager(Ctx ctx, std::shared_ptr<const Options> options) : ctx_(ctx), options_(std::move(options)) {}

  Task<> run() {
    // An invalid config (a reload that slipped past validation, or a start without a configurer)
    // leaves the manager inert: it only answers ValidateConfig, with the problems, until a valid
    // config arrives. Under a configurer the objection stops the node before it serves anything.
    while (!validate(config()).empty()) {
      auto envelope = co_await ctx_.recv();
      if (!envelope) co_return;
      co_await handle(*envelope, this, &Manager::on_validate);
    }
    start();
    while (auto envelope = co_await ctx_.recv()) {
      co_await handle(
          *envelope,
          [&](const ps::Register& request, ResponseToken<ps::Register> token) {
            on_register(request, envelope->sender(), std::move(token));
          },
          this, &Manager::on_unregister, &Manager::on_get_assignments, &Manager::on_report, &Manager::on_ping_done,
          &Manager::on_command_done, &Manager::on_phase_timeout, &Manager::on_health_timeout, &Manager::on_tick,
          &Manager::on_retry_rebalance, &Manager::on_persist_retry, &Manager::on_validate, &Manager::on_health_sweep,
          &Manager::on_config_updated);
    }
  }

 private:
  const Config& config() const { return ctx_.config(); }

  // --- start ----------------------------------------------------------------------------------

  void start() {
    function_ = *hashing::ShardFunction::parse(config().shard_function);
    health_ = options_->health_check ? options_->health_check : std::make_shared<DirectPingHealthCheck>();
    auto storage = options_->storage ? options_->storage(config()) : open_storage(config());
    if (!storage) throw std::runtime_error(fmt::format("cannot open the assignment storage: {}", storage.error()));
    storage_ = std::move(storage).value();

    // A storage that cannot be read stops the start (the supervisor retries with backoff): a
    // manager that started from an empty map while a real one exists would fork it.
    auto loaded = storage_->load();
    if (!loaded) {
      throw std::runtime_error(fmt::format("cannot load from {}: {}", storage_->describe(), loaded.error()));
    }
    map_ = ReplicaMap::unassigned(function_.first_shard(), function_.shard_count());
    if (const std::optional<StoredState>& stored = loaded.value(); stored.has_value()) restore(stored.value());

    started_ = true;
    reconnect_until_ = Clock::now() + config().reconnect_grace;
    tick_ = ctx_.attach(Interval(RebalanceTick{}));
    tick_->start(config().rebalance_interval);
    sweep_ = ctx_.attach(Interval(HealthSweep{}));
    sweep_->start(config().health_check_interval);
    publish_gauges();
    if (!pods_.empty()) {
      log::info("shard manager: loaded {} pods and epoch {} from {}", pods_.size(), map_.epoch(), storage_->describe());
      start_resync();
    } else {
      log::info("shard manager: {} with {}", storage_->describe(), function_);
    }
  }

  void restore(const StoredState& stored) {
    const auto& a = stored.assignments;
    if (a.shard_function != function_.to_string()) {
      throw std::runtime_error(
          fmt::format("{} holds a map for shard function `{}`, the config says `{}`: changing it "
                      "is a migration of the whole cluster, not a restart",
                      storage_->describe(), a.shard_function, function_));
    }
    revision_ = stored.revision;
    pods_ = a.pods;
    std::map<ShardId, std::vector<PodId>> replicas;
    for (std::size_t i = 0; i < a.owners.size(); ++i) {
      const ShardId shard = a.first_shard + static_cast<ShardId>(i);
      std::vector<PodId> set;
      for (const PodEntry& entry : a.replica_set(shard)) set.push_back(to_id(entry.pod));
      replicas.emplace(shard, std::move(set));
    }
    map_ = ReplicaMap::from_replicas(std::move(replicas), a.epoch);
    if (map_.shard_count() != function_.shard_count()) {
      throw std::runtime_error(fmt::format("{} holds {} shards, the shard function has {}", storage_->describe(),
                                           map_.shard_count(), function_.shard_count()));
    }
  }

  // --- the manager's own messages ---------------------------------------------------------------

  void on_get_assignments(const ps::GetAssignments&, ResponseToken<ps::GetAssignments> token) {
    ctx_.respond(std::move(token), snapshot(pods_, map_));
  }

  void on_tick(const RebalanceTick&) { rebalance_now(); }
  void on_retry_rebalance(const RetryRebalance&) { rebalance_now(); }

  void rebalance_now() {
    // Suspects are pinged again: one that answers is no longer a reason to hold back balancing.
    const std::vector<PodId> suspects(suspects_.begin(), suspects_.end());
    for (const auto& id : suspects) start_health_check(id);
    if (!round_) {
      // Removals and releases whose save failed earlier are tried again before any round.
      remove_dead();
      apply_late_releases();
    }
    request_round(RoundKind::Regular);
  }

  void on_persist_retry(const PersistRetry& retry) {
    if (round_ && round_->id == retry.round && round_->phase == Phase::Persist) persist_round();
  }

  void on_health_sweep(const HealthSweep&) {
    const std::vector<PodEntry> pods = pods_;
    for (const auto& entry : pods) start_health_check(to_id(entry.pod));
  }

  void on_config_updated(const ConfigUpdated&) {
    if (tick_) tick_->set_period(config().rebalance_interval);
    if (sweep_) sweep_->set_period(config().health_check_interval);
  }

  void on_validate(const ValidateConfig& request, ResponseToken<ValidateConfig> token) {
    std::string verdict = config_verdict<Config>(request.config);
    if (auto next = request.config.decode<Config>();
        verdict.empty() && next && started_ &&
        hashing::ShardFunction::parse(next->shard_function)->to_string() != function_.to_string()) {
      verdict = fmt::format("{}shard_function: `{}` cannot replace `{}` while running (a migration, not a reload)",
                            request.config.where("shard_function"), next->shard_function, function_);
    }
    ctx_.respond(std::move(token), std::move(verdict));
  }

  // --- pods -----------------------------------------------------------------------------------

  void on_register(const ps::Register& request, Addr sender, ResponseToken<ps::Register> token) {
    auto refuse = [&](ShardingErrorKind kind, std::string detail) {
      log::warn("shard manager: register of {} refused: {}", request.pod, detail);
      ctx_.respond(std::move(token), Err{ShardingError{kind, std::move(detail), std::nullopt}});
    };
    if (request.pod.address.empty()) return refuse(ShardingErrorKind::BadRequest, "the pod's address is empty");
    auto function = hashing::ShardFunction::parse(request.shard_function);
    if (!function) return refuse(ShardingErrorKind::ShardFunctionMismatch, fmt::format("{}", function.error()));
    if (auto same = hashing::check_matches(function_, *function); !same) {
      return refuse(ShardingErrorKind::ShardFunctionMismatch, fmt::format("{}", same.error()));
    }
    PodEntry entry{request.pod, request.endpoint != 0 ? request.endpoint : sender.raw(), request.version};
    if (entry.endpoint == 0) return refuse(ShardingErrorKind::BadRequest, "no endpoint and no sender");
    // A pod that registers answered by sending; a health check with an authority of its own may
    // still know better (a process that lost its node).
    metrics::increment_counter("elfin_shard_manager_health_checks_total");
    if (health_->check(entry, PingOutcome::Answered) == Health::Dead) {
      return refuse(ShardingErrorKind::PodDead, fmt::format("{}", request.pod));
    }

    std::vector<PodEntry> pods = pods_;
    std::optional<PodId> replaced;  // an older incarnation at the same address
    bool changed = true;
    for (auto& known : pods) {
      if (known.pod.address != request.pod.address) continue;
      if (known.pod.incarnation > request.pod.incarnation) {
        return refuse(ShardingErrorKind::StaleIncarnation,
                      fmt::format("{} is registered at {}", known.pod, request.pod.address));
      }
      if (known.pod.incarnation < request.pod.incarnation) replaced = to_id(known.pod);
      if (known.pod == request.pod) {
        changed = !(known == entry);
        known = entry;  // the same pod again (a retried Register): its endpoint or version may be new
      }
    }
    const bool fresh = std::none_of(pods.begin(), pods.end(), [&](const PodEntry& p) { return p.pod == entry.pod; });
    if (fresh) pods.push_back(entry);
    if (changed) {
      if (auto saved = persist(pods, map_); !saved) {
        return refuse(ShardingErrorKind::StorageUnavailable, fmt::format("{}", saved.error()));
      }
      pods_ = std::move(pods);
    }
    log::info("shard manager: {} registered (v{}){}", entry.pod, entry.version, fresh ? "" : " again");
    ctx_.respond(std::move(token), ps::Registered{snapshot(pods_, map_)});
    publish_gauges();
    if (changed) notify_all();
    // The old incarnation may still be running somewhere: it loses its shards only once the
    // health check says it is dead (a new process answering at its endpoint is proof enough for
    // the direct check).
    if (replaced) start_health_check(*replaced);
    // The first pod gets every shard at once; orphans are placed at once whenever a pod can take them.
    if (needs_repair()) request_round(RoundKind::Immediate);
  }

  void on_unregister(const ps::Unregister& request, ResponseToken<ps::Unregister> token) {
    if (round_) {
      // Removing a pod under a round in flight would change the map it is carrying out.
      deferred_unregisters_.push_back({request, std::move(token)});
      return;
    }
    const PodId id = to_id(request.pod);
    if (!find_pod(id)) {
      ctx_.respond(std::move(token),
                   Err{ShardingError{ShardingErrorKind::UnknownPod, fmt::format("{}", request.pod), std::nullopt}});
      return;
    }
    if (auto removed = remove_pods({id}); !removed) {
      ctx_.respond(std::move(token), Err{ShardingError{ShardingErrorKind::StorageUnavailable,
                                                       fmt::format("{}", removed.error()), std::nullopt}});
      return;
    }
    log::info("shard manager: {} unregistered", request.pod);
    ctx_.respond(std::move(token), Unit{});
    notify_all();
    request_round(RoundKind::Immediate);
  }

  void on_report(const ps::ReportUnhealthyPod& report) {
    // Counted as received: what shows that senders rate-limit their reports.
    metrics::increment_counter("elfin_shard_manager_unhealthy_reports_total");
    const PodId id = to_id(report.pod);
    if (!find_pod(id)) return;
    log::info("shard manager: {} reported {} unhealthy", report.reporter, report.pod);
    start_health_check(id);
  }

  /// Takes `ids` out of the pods and their shards out of the map (unassigned), persisted first.
  Result<void, StorageError> remove_pods(const std::vector<PodId>& ids) {
    std::vector<PodEntry> pods;
    for (const auto& entry : pods_) {
      if (std::find(ids.begin(), ids.end(), to_id(entry.pod)) == ids.end()) pods.push_back(entry);
    }
    ReplicaMap map = map_;
    for (const auto& id : ids) map = map.without_pod(id);
    if (auto saved = persist(pods, map); !saved) return saved;
    pods_ = std::move(pods);
    map_ = std::move(map);
    for (const auto& id : ids) suspects_.erase(id);
    publish_gauges();
    return {};
  }

  const PodEntry* find_pod(const PodId& id) const {
    for (const auto& entry : pods_) {
      if (entry.pod.address == id.address && entry.pod.incarnation == id.incarnation) return &entry;
    }
    return nullptr;
  }

  // --- health checks on their own (reports, replaced incarnations) -----------------------------

  void start_health_check(const PodId& id) {
    const PodEntry* entry = find_pod(id);
    if (entry == nullptr || dead_.contains(id)) return;
    for (const auto& [op, pod] : health_ops_) {
      if (pod == id) return;  // one at a time per pod: reports are rate-limited here
    }
    const std::uint64_t op = ++next_op_;
    health_ops_.emplace(op, id);
    ctx_.attach(Stream::once(ping_task(ctx_, Addr{entry->endpoint}, entry->pod, op, PingPurpose::Health)));
    ctx_.attach(Delay(config().ping_timeout, HealthTimeout{op}));
  }

  void on_health_timeout(const HealthTimeout& timeout) {
    auto it = health_ops_.find(timeout.op);
    if (it == health_ops_.end()) return;
    const PodId id = it->second;
    health_ops_.erase(it);
    judge(id, PingOutcome::NoAnswer);
  }

  /// Asks the health check about `id`; a dead pod is removed (now, or after the round in flight).
  void judge(const PodId& id, PingOutcome ping) {
    const PodEntry* entry = find_pod(id);
    if (entry == nullptr) return;
    metrics::increment_counter("elfin_shard_manager_health_checks_total");
    // Just started: the pods have not dialled this node yet, so unreachable says nothing.
    if (ping == PingOutcome::Unreachable && Clock::now() < reconnect_until_) ping = PingOutcome::NoAnswer;
    const Health health = health_->check(*entry, ping);
    if (ping == PingOutcome::Answered) {
      suspects_.erase(id);
    } else {
      suspects_.insert(id);
    }
    if (health != Health::Dead) {
      if (ping != PingOutcome::Answered) {
        log::warn("shard manager: {} {} but the health check says {}: it keeps its shards", entry->pod, to_string(ping),
                  to_string(health));
      }
      return;
    }
    log::warn("shard manager: {} is dead ({}): its shards will be reassigned", entry->pod, to_string(ping));
    metrics::increment_counter("elfin_shard_manager_pods_found_dead_total");
    dead_.insert(id);
    if (!round_) remove_dead();
  }

  void remove_dead() {
    if (dead_.empty()) return;
    std::vector<PodId> ids(dead_.begin(), dead_.end());
    if (auto removed = remove_pods(ids); !removed) {
      log::error("shard manager: cannot persist the removal of dead pods: {}; retrying in {} ms", removed.error(),
                 config().rebalance_retry_interval.count());
      ctx_.attach(Delay(config().rebalance_retry_interval, RetryRebalance{}));
      return;
    }
    dead_.clear();
    notify_all();
    request_round(RoundKind::Immediate);
  }

  // --- rounds ---------------------------------------------------------------------------------

  void request_round(RoundKind kind) {
    if (!pending_ || kind == RoundKind::Immediate) pending_ = kind;
    if (!round_ && !finishing_) start_pending();
  }

  void start_pending() {
    while (!round_ && pending_) {
      RoundKind kind = *pending_;
      pending_.reset();
      start_round(kind);
    }
  }

  std::vector<assignment::Pod> pods_for_plan() const {
    std::vector<assignment::Pod> pods;
    pods.reserve(pods_.size());
    for (const auto& entry : pods_) {
      pods.push_back(assignment::Pod{to_id(entry.pod), assignment::PodVersion::parse(entry.version)});
    }
    return pods;
  }

  void start_round(RoundKind kind) {
    if (pods_.empty()) return;
    // Balancing moves live shards; while a pod is suspect only orphans are placed (Pekko holds
    // back the same way), and orphans never wait.
    if (kind == RoundKind::Regular && !suspects_.empty()) kind = RoundKind::Immediate;
    const auto pods = pods_for_plan();
    // With replication_factor 1 this is plan_rebalance (Shardcake's algorithm) exactly; above 1 a
    // round also gives shards that lost a replica (a dead or departed pod) a replacement.
    auto plan = assignment::plan_replicas(
        pods, map_, kind, assignment::ReplicaOptions{config().replication_factor, config().rebalance_rate});
    if (plan.empty()) return;
    Round round;
    round.id = ++next_op_;
    round.kind = kind;
    round.started = Clock::now();
    round.moves = std::move(plan.moves);
    std::set<PodId> involved;
    for (const auto& move : round.moves) {
      if (move.to) involved.insert(*move.to);
      if (move.from && find_pod(*move.from)) involved.insert(*move.from);
    }
    log::info("shard manager: round {} ({}): {} moves over {} pods", round.id, kind, round.moves.size(),
              involved.size());
    round_ = std::make_unique<Round>(std::move(round));
    begin_pings(involved);
  }

  /// After a start: the stored map again under a new epoch, and every live pod its shards again.
  void start_resync() {
    Round round;
    round.id = ++next_op_;
    round.kind = RoundKind::Immediate;
    round.resync = true;
    round.started = Clock::now();
    std::set<PodId> all;
    for (const auto& entry : pods_) all.insert(to_id(entry.pod));
    round_ = std::make_unique<Round>(std::move(round));
    begin_pings(all);
  }

  void begin_pings(const std::set<PodId>& pods) {
    round_->phase = Phase::Ping;
    round_->awaiting = pods;
    for (const auto& id : pods) {
      const PodEntry* entry = find_pod(id);
      ctx_.attach(Stream::once(ping_task(ctx_, Addr{entry->endpoint}, entry->pod, round_->id, PingPurpose::Round)));
    }
    ctx_.attach(Delay(config().ping_timeout, PhaseTimeout{round_->id, static_cast<std::uint8_t>(Phase::Ping)}));
    if (round_->awaiting.empty()) after_pings();
  }

  void on_ping_done(const PingDone& done) {
    const auto outcome = static_cast<PingOutcome>(done.outcome);
    const PodId id = to_id(done.pod);
    if (static_cast<PingPurpose>(done.purpose) == PingPurpose::Health) {
      auto it = health_ops_.find(done.op);
      if (it == health_ops_.end()) return;  // timed out already
      health_ops_.erase(it);
      judge(id, outcome);
      return;
    }
    if (!round_ || round_->id != done.op || round_->phase != Phase::Ping) return;  // late
    if (round_->awaiting.erase(id) == 0) return;
    if (outcome == PingOutcome::Answered) {
      suspects_.erase(id);
    } else {
      fail(id, outcome);
    }
    if (round_->awaiting.empty()) after_pings();
  }

  void fail(const PodId& id, PingOutcome outcome) {
    round_->failures = true;
    round_->failed.emplace(id, outcome);  // the first failure says most (a ping's outcome)
  }

  void on_phase_timeout(const PhaseTimeout& timeout) {
    if (!round_ || round_->id != timeout.round || static_cast<std::uint8_t>(round_->phase) != timeout.phase) return;
    if (round_->awaiting.empty()) return;
    for (const auto& id : round_->awaiting) {
      fail(id, PingOutcome::NoAnswer);
      if (round_->phase != Phase::Ping) round_->recheck.insert(id);
    }
    round_->awaiting.clear();
    switch (round_->phase) {
      case Phase::Ping:
        after_pings();
        break;
      case Phase::Unassign:
        after_unassigns();
        break;
      case Phase::Assign:
        finish_round();
        break;
      case Phase::Persist:
        break;
    }
  }

  /// Drops every move that touches a failed pod: its shards stay where they are this round.
  void drop_moves_of_failed() {
    auto& r = *round_;
    std::erase_if(r.moves, [&](const ReplicaMove& move) {
      if (move.to && r.failed.contains(*move.to)) return true;
      return move.from && r.failed.contains(*move.from) && find_pod(*move.from) != nullptr;
    });
  }

  void after_pings() {
    auto& r = *round_;
    if (r.resync) {
      persist_round();
      return;
    }
    drop_moves_of_failed();
    std::map<PodId, std::vector<ShardId>> unassign;
    for (const auto& move : r.moves) {
      if (move.from && find_pod(*move.from)) unassign[*move.from].push_back(move.shard);
    }
    r.phase = Phase::Unassign;
    for (auto& [id, shards] : unassign) {
      const PodEntry* entry = find_pod(id);
      r.awaiting.insert(id);
      ps::UnassignShards request{entry->pod, std::move(shards), map_.epoch()};
      ctx_.attach(Stream::once(command_task(ctx_, Addr{entry->endpoint}, std::move(request), r.id, true)));
    }
    if (r.awaiting.empty()) {
      after_unassigns();
      return;
    }
    ctx_.attach(Delay(config().handoff_timeout, PhaseTimeout{r.id, static_cast<std::uint8_t>(Phase::Unassign)}));
  }

  void on_command_done(const CommandDone& done) {
    const PodId id = to_id(done.pod);
    const auto result = static_cast<CommandResult>(done.result);
    const bool current = round_ && round_->id == done.round && round_->awaiting.contains(id) &&
                         round_->phase == (done.unassign ? Phase::Unassign : Phase::Assign);
    if (!current) {
      if (done.unassign && result == CommandResult::Ok) released_late(id, done.shards);
      return;
    }
    round_->awaiting.erase(id);
    if (result != CommandResult::Ok) {
      log::warn("shard manager: round {}: {} of {} to {} failed: {}", done.round, done.unassign ? "unassign" : "assign",
                assignment::format_shard_ids(done.shards), done.pod, done.detail);
      if (!done.unassign && result == CommandResult::Refused) {
        // The pod said no: it holds none of them, so they may go elsewhere.
        round_->refused[id] = done.shards;
        round_->failures = true;
      } else {
        fail(id, result == CommandResult::Failed ? PingOutcome::Unreachable : PingOutcome::NoAnswer);
        round_->recheck.insert(id);
      }
    }
    if (!round_->awaiting.empty()) return;
    if (done.unassign) {
      after_unassigns();
    } else {
      finish_round();
    }
  }

  /// An unassign answered after its round gave up on it: the pod has stopped those shards, so
  /// the map must stop saying it owns them (else nobody serves them until it dies).
  void released_late(const PodId& id, const std::vector<ShardId>& shards) {
    std::vector<ShardId> still;
    for (ShardId shard : shards) {
      const auto replicas = map_.replicas(shard);
      if (std::find(replicas.begin(), replicas.end(), id) != replicas.end()) still.push_back(shard);
    }
    if (still.empty()) return;
    log::info("shard manager: {} released {} late", id, assignment::format_shard_ids(still));
    late_releases_[id].insert(late_releases_[id].end(), still.begin(), still.end());
    if (!round_) apply_late_releases();
  }

  void apply_late_releases() {
    if (late_releases_.empty()) return;
    ReplicaMap next = without_replicas(late_releases_);
    if (auto saved = persist(pods_, next); !saved) {
      log::error("shard manager: cannot persist late releases: {}", saved.error());
      ctx_.attach(Delay(config().rebalance_retry_interval, RetryRebalance{}));
      return;
    }
    late_releases_.clear();
    map_ = std::move(next);
    publish_gauges();
    notify_all();
    request_round(RoundKind::Immediate);
  }

  void after_unassigns() {
    // A pod whose unassign failed keeps those shards and gains nothing this round (Shardcake).
    drop_moves_of_failed();
    persist_round();
  }

  void persist_round() {
    auto& r = *round_;
    r.phase = Phase::Persist;
    if (r.resync) {
      r.next = ReplicaMap::from_replicas(map_.replica_sets(), map_.epoch() + 1);
    } else {
      ReplicaPlan plan{r.moves};
      auto next = map_.apply(plan);
      if (!next) {
        log::error("shard manager: round {}: {}", r.id, next.error());  // a bug: the map changed under the round
        r.moves.clear();
        r.failures = true;
        finish_round();
        return;
      }
      r.next = std::move(next).value();
    }
    if (auto saved = persist(pods_, r.next); !saved) {
      // Nothing is assigned from a map that is not stored; the old owners have stopped, so these
      // shards are unserved until the storage is back. Safety first.
      log::error("shard manager: round {}: cannot persist epoch {}: {}; retrying in {} ms", r.id, r.next.epoch(),
                 saved.error(), config().persist_retry_interval.count());
      ctx_.attach(Delay(config().persist_retry_interval, PersistRetry{r.id}));
      return;
    }
    map_ = r.next;
    begin_assigns();
  }

  void begin_assigns() {
    auto& r = *round_;
    r.phase = Phase::Assign;
    std::map<PodId, std::vector<ShardId>> assign;
    if (r.resync) {
      for (const auto& entry : pods_) {
        const PodId id = to_id(entry.pod);
        if (r.failed.contains(id)) continue;
        auto shards = map_.shards_of(id);
        if (!shards.empty()) assign.emplace(id, std::move(shards));
      }
    } else {
      for (const auto& move : r.moves) {
        if (move.to) assign[*move.to].push_back(move.shard);
      }
    }
    for (auto& [id, shards] : assign) {
      const PodEntry* entry = find_pod(id);
      r.awaiting.insert(id);
      ps::AssignShards request{entry->pod, std::move(shards), map_.epoch()};
      ctx_.attach(Stream::once(command_task(ctx_, Addr{entry->endpoint}, std::move(request), r.id, false)));
    }
    if (r.awaiting.empty()) {
      finish_round();
      return;
    }
    ctx_.attach(Delay(config().handoff_timeout, PhaseTimeout{r.id, static_cast<std::uint8_t>(Phase::Assign)}));
  }

  void finish_round() {
    Round r = std::move(*round_);
    round_.reset();
    finishing_ = true;  // deferred work first; the next round starts at the end
    // Refused assigns: the pod holds none of those shards, so they are unassigned again.
    std::size_t refused = 0;
    if (!r.refused.empty()) {
      for (const auto& [id, shards] : r.refused) refused += shards.size();
      ReplicaMap next = without_replicas(r.refused);
      if (auto saved = persist(pods_, next); saved) {
        map_ = std::move(next);
      } else {
        log::error("shard manager: cannot persist the refused assignments: {}", saved.error());
      }
    }
    const auto seconds = std::chrono::duration<double>(Clock::now() - r.started).count();
    metrics::increment_counter("elfin_shard_manager_rebalances_total");
    metrics::record_histogram("elfin_shard_manager_rebalance_seconds", seconds);
    metrics::increment_counter("elfin_shard_manager_shard_moves_total", r.resync ? 0 : r.moves.size() - refused);
    if (r.failures) metrics::increment_counter("elfin_shard_manager_rebalance_failures_total");
    log::info("shard manager: round {} done in {:.3f} s: epoch {}, {} pods, {} unassigned{}", r.id, seconds,
              map_.epoch(), pods_.size(), map_.unassigned_shards().size(), r.failures ? " (with failures)" : "");
    publish_gauges();
    notify_all();

    // Every pod that failed a step is asked about; only the dead lose their shards. A failed
    // command says little about the pod (its sharding actor may have failed while handling it),
    // so those pods are pinged again first; a failed ping of this round is fresh enough.
    for (const auto& [id, outcome] : r.failed) {
      if (r.recheck.contains(id)) {
        start_health_check(id);
      } else {
        judge(id, outcome);
      }
    }
    // Deferred work, in order: dead pods, late releases, unregisters.
    remove_dead();
    apply_late_releases();
    auto unregisters = std::move(deferred_unregisters_);
    deferred_unregisters_.clear();
    for (auto& d : unregisters) on_unregister(d.message, std::move(d.token));
    if (r.failures) ctx_.attach(Delay(config().rebalance_retry_interval, RetryRebalance{}));
    // Orphans left by this round are placed at once, unless it failed: then the retry waits
    // rebalance_retry_interval (a pod that keeps refusing must not spin the manager).
    if (!r.failures && needs_repair() && !pending_) pending_ = RoundKind::Immediate;
    finishing_ = false;
    start_pending();
  }

  // --- storage, snapshots, notifications --------------------------------------------------------

  /// Saves `pods` and `map` as the next revision. Every attempt takes a new revision, so a save
  /// whose answer was lost (it may have happened) is simply superseded by the next one.
  /// Some shard has fewer replicas than it should (none, with replication_factor 1): a round
  /// places them at once rather than at the next tick.
  bool needs_repair() const {
    const std::size_t wanted = std::min<std::size_t>(config().replication_factor, pods_.size());
    return !map_.under_replicated(wanted).empty();
  }

  /// The next map (epoch + 1) without each pod's replica of the shards listed for it (a pod that
  /// refused them or released them late holds none of them).
  ReplicaMap without_replicas(const std::map<PodId, std::vector<ShardId>>& dropped) const {
    ReplicaPlan plan;
    for (const auto& [id, shards] : dropped) {
      for (ShardId shard : shards) {
        const auto replicas = map_.replicas(shard);
        if (std::find(replicas.begin(), replicas.end(), id) != replicas.end()) {
          plan.moves.push_back(ReplicaMove{shard, id, std::nullopt});
        }
      }
    }
    auto next = map_.apply(plan);
    if (next && !plan.empty()) return std::move(next).value();
    return ReplicaMap::from_replicas(map_.replica_sets(), map_.epoch() + 1);
  }

  Result<void, StorageError> persist(const std::vector<PodEntry>& pods, const ReplicaMap& map) {
    StoredState state;
    state.revision = ++revision_;
    state.assignments = snapshot(pods, map);
    auto saved = storage_->save(state);
    if (saved) {
      metrics::set_gauge("elfin_shard_manager_epoch", static_cast<double>(map.epoch()));
      return saved;
    }
    metrics::increment_counter("elfin_shard_manager_storage_failures_total");
    if (saved.error().kind == StorageErrorKind::Conflict) {
      // Another manager wrote a newer revision: two managers would fork the map. This one stops;
      // its restart loads what the other wrote.
      throw std::runtime_error(
          fmt::format("another shard manager writes to {}: {}", storage_->describe(), saved.error()));
    }
    return saved;
  }

  ps::Assignments snapshot(const std::vector<PodEntry>& pods, const ReplicaMap& map) const {
    ps::Assignments a;
    a.epoch = map.epoch();
    a.shard_function = function_.to_string();
    a.first_shard = function_.first_shard();
    a.pods = pods;
    std::map<PodId, std::int32_t> index;
    for (std::size_t i = 0; i < pods.size(); ++i) index.emplace(to_id(pods[i].pod), static_cast<std::int32_t>(i));
    a.replication_factor = config().replication_factor;
    a.owners.reserve(map.shard_count());
    bool more = false;
    for (const auto& [shard, replicas] : map.replica_sets()) more = more || replicas.size() > 1;
    if (more) a.replicas.reserve(map.shard_count());
    for (const auto& [shard, replicas] : map.replica_sets()) {
      std::int32_t owner = -1;
      std::vector<std::int32_t> others;
      for (std::size_t k = 0; k < replicas.size(); ++k) {
        const auto it = index.find(replicas[k]);
        if (it == index.end()) continue;  // a pod no longer registered: not published
        if (owner < 0 && k == 0) {
          owner = it->second;
        } else {
          others.push_back(it->second);
        }
      }
      a.owners.push_back(owner);
      if (more) a.replicas.push_back(std::move(others));
    }
    return a;
  }

  void notify_all() {
    const ps::Assignments current = snapshot(pods_, map_);
    for (const auto& entry : pods_) {
      // Never waits: a pod whose mailbox is full reads the map again (GetAssignments).
      std::ignore = ctx_.try_send_to(Addr{entry.endpoint}, ps::AssignmentsChanged{current});
    }
  }

  void publish_gauges() {
    metrics::set_gauge("elfin_shard_manager_pods", static_cast<double>(pods_.size()));
    metrics::set_gauge("elfin_shard_manager_unassigned_shards", static_cast<double>(map_.unassigned_shards().size()));
    const std::size_t wanted = std::min<std::size_t>(config().replication_factor, pods_.size());
    metrics::set_gauge("elfin_shard_manager_under_replicated_shards",
                       static_cast<double>(map_.under_replicated(wanted).size()));
    metrics::set_gauge("elfin_shard_manager_epoch", static_cast<double>(map_.epoch()));
    std::size_t lowest = pods_.empty() ? 0 : map_.shard_count();
    std::size_t highest = 0;
    const auto counts = map_.counts();
    for (const auto& entry : pods_) {
      auto it = counts.find(to_id(entry.pod));
      const std::size_t n = it == counts.end() ? 0 : it->second;
      lowest = std::min(lowest, n);
      highest = std::max(highest, n);
    }
    metrics::set_gauge("elfin_shard_manager_shards_per_pod_min", static_cast<double>(lowest));
    metrics::set_gauge("elfin_shard_manager_shards_per_pod_max", static_cast<double>(highest));
  }

  Ctx ctx_;
  std::shared_ptr<const Options> options_;
  hashing::ShardFunction function_;
  std::shared_ptr<HealthCheck> health_;
  std::unique_ptr<AssignmentStorage> storage_;
  std::optional<Interval<RebalanceTick>> tick_;
  std::optional<Interval<HealthSweep>> sweep_;

  bool started_ = false;
  Clock::time_point reconnect_until_{};  ///< until then an unreachable pod may just not have reconnected
  std::uint64_t revision_ = 0;
  std::vector<PodEntry> pods_;  ///< registration order
  ReplicaMap map_;              ///< always the last persisted map

  std::uint64_t next_op_ = 0;
  std::unique_ptr<Round> round_;  ///< the round in flight, if any
  std::optional<RoundKind> pending_;
  bool finishing_ = false;
  std::set<PodId> suspects_;                   ///< failed their last ping
  std::set<PodId> dead_;                       ///< found dead, removal pending
  std::map<std::uint64_t, PodId> health_ops_;  ///< health checks in flight
  std::map<PodId, std::vector<ShardId>> late_releases_;
  std::vector<DeferredUnregister> deferred_unregisters_;
};

Task<> manager_exec(Ctx ctx, std::shared_ptr<const Options> options) {
  Manager manager(ctx, std::move(options));
  co_await manager.run();
}

}  // namespace

Blueprint blueprint(Options options) {
  auto shared = std::make_shared<const Options>(std::move(options));
  return ActorGroup()
      .config<Config>()
      // ValidateConfig reaches the actor (groups opt in), so a reload is checked beyond types.
      .router(MapRouter<Singleton>([](const Envelope& e) {
        if (e.is<Terminate>() || e.is<Ping>()) return Outcome<Singleton>::GentleUnicast(Singleton{});
        return Outcome<Singleton>::Unicast(Singleton{});
      }))
      // A storage that cannot be read (or another manager writing to it) fails the actor; it comes
      // back with backoff and loads the stored map again.
      .restart_policy(
          RestartPolicy::on_failure(RestartParams{std::chrono::milliseconds{500}, std::chrono::seconds{30}}))
      .exec([shared](Ctx ctx) { return manager_exec(ctx, shared); });
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kBlueprintName), blueprint(),
                             "the shard manager: pods register, shards are assigned, the map is persisted");
}

}  // namespace elfin::actors::shard_manager
