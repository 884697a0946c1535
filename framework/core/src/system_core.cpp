#include "system_core.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/internal/thread_name.hpp>
#include <elfin/messages.hpp>

#include "runtime_log.hpp"

namespace elfin::detail {

namespace {

/// The end of an actor's input, written once for every way an actor stops for good (it finished,
/// it was forgotten while waiting for a restart, or termination gave up on it at shutdown): refuse
/// new messages, make the cell Dead so a notify is a no-op, drop what is still queued (a request
/// among it fails: its recipient finished before handling it), then the actor's sources (timers
/// cancelled, signals unsubscribed) and its coroutine frame, while every cell is still alive.
void close_for_good(ActorCell& cell) {
  cell.mailbox().close();
  cell.sched_.store(SchedState::Dead, std::memory_order_release);
  std::ignore = cell.mailbox().drain();
  cell.sources().clear();
  cell.task_ = {};
  cell.route_cache_.clear();  // the frame (and every send that borrowed from it) is gone
}

}  // namespace

SystemCore::SystemCore(StartOptions options)
    : options_(std::move(options)),
      scheduler_(options_.workers, options_.virtual_time),
      timers_(options_.virtual_time, options_.virtual_start) {}

SystemCore::~SystemCore() {
  terminate("system dropped");
  join();
  if (terminator_.joinable()) terminator_.join();
  set_remote_router(nullptr);
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(extensions_mu_);
    hooks.swap(shutdown_hooks_);
  }
  for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)();
  // No timer may wake an actor from here on; pending ones are dropped with whatever they own.
  timers_.shutdown();
  scheduler_.stop();
  // Actors that never finished (termination gave up on them) still own coroutine frames and
  // mailboxes that may hold wakers of each other; destroy them while every cell is still alive.
  for (const auto& cell : book_.snapshot()) close_for_good(*cell);
}

std::shared_ptr<void> SystemCore::extension(std::string_view name, const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard lock(extensions_mu_);
  for (const auto& [n, state] : extensions_) {
    if (n == name) return state;
  }
  return extensions_.emplace_back(std::string(name), make()).second;
}

std::shared_ptr<void> system_extension(SystemCore& system, std::string_view name,
                                       const std::function<std::shared_ptr<void>()>& make) {
  return system.extension(name, make);
}
void SystemCore::add_shutdown_hook(std::function<void()> hook) {
  std::lock_guard lock(extensions_mu_);
  shutdown_hooks_.push_back(std::move(hook));
}

void SystemCore::add_scrape_collector(ScrapeCollector collect) {
  std::lock_guard lock(collectors_mu_);
  scrape_collectors_.push_back(std::move(collect));
}

std::vector<ScrapeCollector> SystemCore::scrape_collectors() const {
  std::lock_guard lock(collectors_mu_);
  return scrape_collectors_;
}

void on_system_shutdown(SystemCore& system, std::function<void()> hook) { system.add_shutdown_hook(std::move(hook)); }
void on_scrape(SystemCore& system, ScrapeCollector collect) { system.add_scrape_collector(std::move(collect)); }
void set_remote_router(SystemCore& system, RemoteRouter* router) { system.set_remote_router(router); }
std::uint16_t node_no_of(const SystemCore& system) { return system.node_no(); }
GroupRuntime* find_group(const SystemCore& system, std::string_view name) { return system.find_group(name); }
GroupRuntime* group_by_no(const SystemCore& system, std::uint8_t group_no) { return system.group(group_no); }

QuiescenceHold::QuiescenceHold(SystemCore& system) : scheduler_(&system.scheduler()) { scheduler_->hold(); }
QuiescenceHold::~QuiescenceHold() {
  if (scheduler_ != nullptr) scheduler_->release();
}

ScheduleBatch::ScheduleBatch(SystemCore& system) : system_(system) { system_.scheduler().begin_batch(); }
ScheduleBatch::~ScheduleBatch() { system_.scheduler().end_batch(); }
void ScheduleBatch::flush() { system_.scheduler().flush_batch(); }

GroupRuntime* SystemCore::group(std::uint8_t group_no) const {
  return group_no >= 1 && group_no <= groups_.size() ? groups_[group_no - 1].get() : nullptr;
}

GroupRuntime* SystemCore::find_group(std::string_view name) const {
  for (const auto& g : groups_) {
    if (g->name() == name) return g.get();
  }
  return nullptr;
}

std::optional<SendErrorKind> SystemCore::resolve_addr(Addr to, const Envelope& envelope, Targets& out) const {
  if (to.node_no() != node_no() && !to.is_null()) {
    // Acquire pairs with the release in set_remote_router: the router is fully built.
    RemoteRouter* remote = remote_router_.load(std::memory_order_acquire);
    return remote != nullptr ? remote->resolve(to, envelope, out) : SendErrorKind::UnknownAddr;
  }
  GroupRuntime* g = group(to.group_no());
  if (g == nullptr) return SendErrorKind::UnknownAddr;
  if (to.is_group()) {
    g->resolve(envelope, out);
    if (out.empty() && !out.absorbed()) return SendErrorKind::NoRoute;
    return std::nullopt;
  }
  // The sending actor's route cache spares a stream to one address the stripe lock and the
  // reference count (route_cache.hpp).
  if (!book_.find_into(to, out.empty() ? current_route_cache() : nullptr, out)) {
    return SendErrorKind::Closed;  // the actor has finished
  }
  return std::nullopt;
}

void SystemCore::send_to_group(GroupRuntime& group, Envelope envelope) {
  SendOp op{*this, group.addr(), std::move(envelope), SendMode::Unbounded};
  std::ignore = op.run(nullptr);
}

void SystemCore::enable_dumping(std::size_t capacity) {
  dump_storage_ = std::make_unique<dumping::DumpStorage>(node_no(), capacity);
  for (const auto& g : groups_) g->dumping().attach(dump_storage_.get(), &g->name());
}

void SystemCore::enable_telemetry() {
  metrics_ = std::make_unique<MetricsStorage>();
  for (const auto& g : groups_) g->telemetry().attach(metrics_.get(), g.get());
  g_stamp_sends.store(true, std::memory_order_release);  // waiting times need send times
}
Result<void, TimeError> SystemCore::advance_time(std::chrono::nanoseconds by,
                                                 std::chrono::milliseconds settle_timeout) {
  if (!timers_.is_virtual()) {
    return Err{TimeError(TimeError::RealTime,
                         "advance_time: this system runs in real time (StartOptions::virtual_time is off)")};
  }
  if (by.count() < 0) return Err{TimeError(TimeError::Backwards, "advance_time: time cannot go backwards")};
  // The actors the timers of one instant wake are queued together (a batch on this thread), so
  // with one worker they run in the same order on every run, whatever the worker was doing while
  // the callbacks fired.
  scheduler_.begin_batch();
  struct EndBatch {
    Scheduler& scheduler;
    ~EndBatch() { scheduler.end_batch(); }
  } end_batch{scheduler_};
  auto settle = [&]() -> Result<void, TimeError> {
    scheduler_.flush_batch();
    if (scheduler_.wait_quiescent(std::chrono::steady_clock::now() + settle_timeout)) return {};
    return Err{TimeError(
        TimeError::NotSettled,
        fmt::format(
            "advance_time: the system did not settle within {} ms of real time ({} actor(s) still queued or running; "
            "an actor that never waits?)",
            settle_timeout.count(), scheduler_.in_flight()))};
  };
  if (auto settled = settle(); !settled) return settled;
  return timers_.advance_to(timers_.now() + std::chrono::duration_cast<TimerService::Clock::duration>(by), settle);
}

TimerService& timers_of(SystemCore& system) { return system.timers(); }

void SystemCore::actor_registered() { live_actors_.fetch_add(1, std::memory_order_relaxed); }

void SystemCore::actor_finished(ActorCell& cell) {
  {
    // Leaving the group and the live count change together under mu_, so whoever waits for a
    // group to empty (termination, join) never sees one without the other.
    std::lock_guard lock(mu_);
    cell.group().on_finished(cell);
    live_actors_.fetch_sub(1, std::memory_order_release);
  }
  cv_.notify_all();
}

void SystemCore::report_status(const ActorCell& cell, const ActorStatus& status) {
  if (status.kind() == ActorStatusKind::Failed) {
    log_runtime(*this, LogLevel::Error, cell, "actor failed: {}", status.details());
  } else if (status.kind() == ActorStatusKind::Alarming) {
    log_runtime(*this, LogLevel::Warn, cell, "actor is alarming: {}", status.details());
  }
  if (options_.on_status) options_.on_status(cell.meta(), cell.addr(), status);
  cell.group().publish_status(cell, status);
}

void SystemCore::log(LogLevel level, std::string_view group, std::string_view key, TraceId trace_id, std::string text) {
  const auto level_no = static_cast<std::size_t>(level);
  log_emitted_[level_no].fetch_add(1, std::memory_order_relaxed);
  LogRecord record{static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count()),
                   static_cast<std::uint8_t>(level),
                   trace_id.raw(),
                   std::string(group),
                   std::string(key),
                   std::move(text)};
  if (logger_ == nullptr) {
    // One fputs per line keeps concurrent lines whole (stdio locks the stream per call).
    std::fputs(format_log_line(record).c_str(), stderr);
    return;
  }
  SendOp op{*this, logger_->addr(), Envelope::make(std::move(record), Addr{}, trace_id), SendMode::Try};
  std::ignore = op.run(nullptr);
  if (!op.result()) log_lost_[level_no].fetch_add(1, std::memory_order_relaxed);
}

LoggingCounters SystemCore::logging_counters() const {
  LoggingCounters c;
  for (std::size_t i = 0; i < kLogLevels; ++i) {
    c.emitted[i] = log_emitted_[i].load(std::memory_order_relaxed);
    c.limited[i] = log_limited_[i].load(std::memory_order_relaxed);
    c.lost[i] = log_lost_[i].load(std::memory_order_relaxed);
  }
  return c;
}

void SystemCore::start_memory_tracker() {
  // Under virtual time the tracker would check the real machine at made-up moments, and its timer
  // would be one more for tests to account for: virtual time is for tests, so it stays off.
  if (timers_.is_virtual()) return;
  const double threshold = options_.memory_threshold.value_or(0.9);
  memory_tracker_ = std::make_unique<MemoryTracker>(
      timers_, options_.memory_check_interval.value_or(std::chrono::milliseconds{3000}), threshold,
      [this](std::string reason) { terminate(std::move(reason)); },
      [this](LogLevel level, std::string text) { log(level, "system.init", "_", TraceId{}, std::move(text)); });
  memory_tracker_->start();
}

void SystemCore::terminate(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (terminating_) return;
    terminating_ = true;
  }
  if (memory_tracker_) memory_tracker_->stop();
  begin_phase(false, reason);
  std::lock_guard lock(mu_);
  terminator_ = std::thread([this, reason = std::move(reason)]() mutable {
    name_this_thread("elfin-terminate");
    termination_sequence(std::move(reason));
  });
}

void SystemCore::kill(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (killed_) return;
    killed_ = true;
    terminating_ = true;  // a later terminate() has nothing left to do
    if (!failure_) failure_ = std::move(reason);
  }
  cv_.notify_all();  // a termination in progress stops waiting for actors that will never finish
  if (memory_tracker_) memory_tracker_->stop();
  for (const auto& g : groups_) g->stop_spawning();
  // Workers first: once they are joined no actor runs, so frames can be destroyed under nobody.
  scheduler_.stop();
  timers_.shutdown();
  for (const auto& cell : book_.snapshot()) close_for_good(*cell);
  {
    std::lock_guard lock(mu_);
    terminated_ = true;
  }
  cv_.notify_all();
}

void SystemCore::fail(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (!failure_) failure_ = reason;
  }
  terminate(std::move(reason));
}

std::optional<std::string> SystemCore::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void SystemCore::join() {
  if (timers_.is_virtual()) {
    // Under virtual time the termination stages wait for a clock nobody else advances while the
    // owner is blocked here, so an actor that ignores Terminate would hang the join for ever: let
    // the stages' time pass once real time shows the system is not finishing by itself.
    const auto stages = *options_.terminate_closing_after + *options_.terminate_give_up_after;
    while (!join_for(std::chrono::milliseconds(20)))
      std::ignore = advance_time(stages, std::chrono::milliseconds(1000));
    return;
  }
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return terminated_; });
}

bool SystemCore::join_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return terminated_; });
}

std::vector<GroupRuntime*> SystemCore::phase_groups(bool system_phase) const {
  std::vector<GroupRuntime*> phase;
  for (const auto& g : groups_) {
    if (g->stops_in_system_phase() == system_phase && !g->traits().external) phase.push_back(g.get());
  }
  return phase;
}

void SystemCore::begin_phase(bool system_phase, const std::string& reason) {
  std::vector<GroupRuntime*> groups = phase_groups(system_phase);
  std::uint64_t phase = 0;
  {
    std::lock_guard lock(mu_);
    phase = phase_ = ++phases_begun_;
    phase_gave_up_ = false;
  }
  for (auto* g : groups) g->stop_spawning();
  for (auto* g : groups) send_to_group(*g, Envelope::make(Terminate{false, reason}, Addr{}, TraceId::generate()));
  const auto timer = timers_.schedule_after(*options_.terminate_closing_after,
                                            [this, phase, groups, reason] { close_phase(phase, groups, reason); });
  std::lock_guard lock(mu_);
  if (phase_ == phase) stage_timer_ = timer;
}

void SystemCore::close_phase(std::uint64_t phase, const std::vector<GroupRuntime*>& groups, const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (phase_ != phase) return;  // the phase ended before its grace period did
  }
  for (auto* g : groups) send_to_group(*g, Envelope::make(Terminate::closing(reason), Addr{}, TraceId::generate()));
  const auto timer = timers_.schedule_after(*options_.terminate_give_up_after, [this, phase] {
    {
      std::lock_guard lock(mu_);
      if (phase_ != phase) return;
      phase_gave_up_ = true;
    }
    cv_.notify_all();
  });
  std::lock_guard lock(mu_);
  if (phase_ == phase) stage_timer_ = timer;
}

void SystemCore::termination_sequence(std::string reason) {
  for (bool system_phase : {false, true}) {
    if (system_phase) begin_phase(true, reason);
    const std::vector<GroupRuntime*> groups = phase_groups(system_phase);
    auto all_empty = [&] {
      return std::all_of(groups.begin(), groups.end(), [](GroupRuntime* g) { return g->active_actors() == 0; });
    };
    TimerService::TimerId pending = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return all_empty() || phase_gave_up_ || killed_; });
      phase_ = 0;  // stage timers still pending or firing now find another phase and stop
      pending = std::exchange(stage_timer_, 0);
    }
    if (pending != 0) std::ignore = timers_.cancel(pending);
    bool killed = false;
    {
      std::lock_guard lock(mu_);
      killed = killed_;
    }
    for (auto* g : killed ? std::vector<GroupRuntime*>{} : groups) {
      if (g->active_actors() != 0) {
        log_runtime(*this, LogLevel::Warn, ActorMeta{g->name(), "_"},
                    "{} actor(s) did not terminate in time; giving up on them", g->active_actors());
      }
    }
  }
  for (const auto& g : groups_) g->stop_spawning();
  {
    std::lock_guard lock(mu_);
    terminated_ = true;
  }
  cv_.notify_all();
}

// --- spawning and finishing ------------------------------------------------------------------

void register_actor(SystemCore& system, const std::shared_ptr<ActorCell>& cell, std::uint8_t group_no) {
  system.address_book().insert(cell, system.node_no(), group_no);
  system.actor_registered();
}

void start_actor(ActorCell& cell) {
  SystemCore& system = cell.group().system();
  cell.suspend(cell.task_.handle(), nullptr, nullptr);
  cell.set_trace_id(TraceId::generate());  // every lifecycle, restarts too, starts a new trace
  cell.set_started_at(system.timers().now());
  // A new actor is Initializing until its first recv; report that before it can run and move on.
  system.report_status(cell, cell.status());
  if (auto& telemetry = cell.group().telemetry(); telemetry.active())
    telemetry.on_status(cell, {}, cell.status().kind());
  // Until now the cell was Dead, so senders that found it only queued their messages. The release
  // store publishes the state above to whichever notify (ours or a sender's) schedules it.
  cell.sched_.store(SchedState::Idle, std::memory_order_release);
  cell.notify();
}

void forget_actor(ActorCell& cell) {
  close_for_good(cell);
  unregister_actor(cell.group().system(), cell);
}

void unregister_actor(SystemCore& system, ActorCell& cell) {
  system.address_book().remove(cell.addr());
  system.actor_finished(cell);
}

void finish_actor(ActorCell& cell) {
  auto keep_alive = cell.shared_from_this();
  ActorStatus final_status = ActorStatus::TERMINATED;
  if (auto error = cell.task_.exception()) {
    std::string reason = describe_exception(error);
    cell.settle_abandoned(RequestError{RequestError::Failed, fmt::format("{}: {}", kFailedWhileHandling, reason)});
    final_status = ActorStatus::FAILED.with_details(std::move(reason));
  } else if (!cell.failure_.empty()) {
    final_status = ActorStatus::FAILED.with_details(cell.failure_);
  }
  cell.settle_abandoned(RequestError::Ignored);
  GroupRuntime& group = cell.group();
  if (auto delay = group.restart_delay(cell, final_status)) {
    // Restarting: the cell keeps its place in the group and its mailbox, so what is sent to it
    // while it waits is handled by its successor (an actor that closed its mailbox gets it
    // reopened). Nothing runs it until the relaunch makes it Idle again.
    cell.sched_.store(SchedState::Dead, std::memory_order_release);
    cell.sources().clear();  // sources die with the actor that attached them, restarted or not
    cell.task_ = {};
    cell.route_cache_.clear();
    cell.set_status(std::move(final_status));
    // Waiting for its restart, it counts as restarting, not as active; start_actor counts it again.
    if (auto& telemetry = group.telemetry(); telemetry.active()) telemetry.on_status(cell, cell.status().kind(), {});
    cell.mailbox().reopen();
    if (group.schedule_restart(keep_alive, *delay)) return;
    forget_actor(cell);  // the group began terminating meanwhile
    return;
  }
  close_for_good(cell);
  cell.set_status(std::move(final_status));
  if (auto& telemetry = group.telemetry(); telemetry.active()) telemetry.on_status(cell, cell.status().kind(), {});
  unregister_actor(group.system(), cell);
}

}  // namespace elfin::detail

namespace elfin::dumping {
DumpStorage* storage_of(const detail::GroupRuntime& group) { return group.system().dump_storage(); }
}  // namespace elfin::dumping

namespace elfin::telemetry {

std::vector<MetricSample> scrape(const detail::GroupRuntime& any_group) {
  const detail::SystemCore& system = any_group.system();
  if (system.metrics() == nullptr) return {};
  auto samples = system.metrics()->snapshot();
  auto gauge = [&](std::string name, std::vector<std::pair<std::string, std::string>> labels, double value) {
    MetricSample sample;
    sample.name = std::move(name);
    sample.labels = std::move(labels);
    sample.kind = MetricKind::Gauge;
    sample.value = value;
    samples.push_back(std::move(sample));
  };
  auto counter = [&](std::string name, double value) {
    gauge(std::move(name), {}, value);
    samples.back().kind = MetricKind::Counter;
  };
  for (const auto& g : system.groups()) {
    auto by_status = g->telemetry().actors_by_status();
    for (std::size_t i = 0; i < by_status.size(); ++i) {
      auto kind = static_cast<ActorStatusKind>(i);
      if (kind == ActorStatusKind::Terminated || kind == ActorStatusKind::Failed) continue;  // gone
      gauge("elfin_active_actors", {{"actor_group", g->name()}, {"status", std::string{to_string(kind)}}},
            static_cast<double>(by_status[i]));
    }
    gauge("elfin_restarting_actors", {{"actor_group", g->name()}}, static_cast<double>(g->restarting_actors()));
    gauge("elfin_restarts_total", {{"actor_group", g->name()}}, static_cast<double>(g->restarts()));
    samples.back().kind = MetricKind::Counter;
  }
  const auto logs = system.logging_counters();
  for (std::size_t i = 0; i < kLogLevels; ++i) {
    const std::string level{to_string(static_cast<LogLevel>(i))};
    for (auto [name, values] :
         {std::pair{"elfin_emitted_events_total", &logs.emitted},
          std::pair{"elfin_limited_events_total", &logs.limited}, std::pair{"elfin_lost_events_total", &logs.lost}}) {
      gauge(name, {{"level", level}}, static_cast<double>((*values)[i]));
      samples.back().kind = MetricKind::Counter;
    }
  }
  if (const auto* dumps = system.dump_storage()) {
    auto c = dumps->counters();
    counter("elfin_emitted_dumps_total", static_cast<double>(c.emitted));
    counter("elfin_limited_dumps_total", static_cast<double>(c.limited));
    counter("elfin_lost_dumps_total", static_cast<double>(c.lost));
  }
  // Batteries' series (the network's per-peer traffic): read at scrape time, like the above.
  for (const auto& collect : system.scrape_collectors()) collect(samples);
  return samples;
}

}  // namespace elfin::telemetry
