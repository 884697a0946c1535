#include "system/system_core.hpp"

#include <fmt/format.h>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/blocking.hpp>
#include <elfin/detail/send_op.hpp>

#include "actor/lifecycle.hpp"
#include "observers/runtime_log.hpp"
#include "supervision/status_subscriptions.hpp"

namespace elfin::detail {

SystemCore::SystemCore(StartOptions options)
    : options_(std::move(options)),
      scheduler_(options_.workers, options_.virtual_time),
      blocking_(options_.blocking_threads),
      timers_(options_.virtual_time, options_.virtual_start) {
  // The actors one pass of real-time timers wakes are queued together, with one wake-up.
  timers_.set_fire_batch([this] { scheduler_.begin_batch(); }, [this] { scheduler_.end_batch(); });
}

SystemCore::~SystemCore() {
  termination_.terminate_and_wait("system dropped");
  set_remote_router(nullptr);
  extensions_.run_shutdown_hooks();
  // Work still running for actors that ended finishes here; it may wake their cells, so before
  // the scheduler stops.
  blocking_.stop();
  // No timer may wake an actor from here on; pending ones are dropped with whatever they own.
  timers_.shutdown();
  scheduler_.stop();
  // Actors that never finished (termination gave up on them) still own coroutine frames and
  // mailboxes that may hold wakers of each other; destroy them while every cell is still alive.
  for (const auto& cell : book_.snapshot()) close_for_good(*cell);
}

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

void SystemCore::report_status(const ActorCell& cell, const ActorStatus& status) {
  if (status.kind() == ActorStatusKind::Failed) {
    log_runtime(*this, LogLevel::Error, cell, "actor failed: {}", status.details());
  } else if (status.kind() == ActorStatusKind::Alarming) {
    log_runtime(*this, LogLevel::Warn, cell, "actor is alarming: {}", status.details());
  }
  if (options_.on_status) options_.on_status(cell.meta(), cell.addr(), status);
  cell.group().status_subscriptions().publish(*this, cell.group().addr(), cell, status);
}

void SystemCore::start_memory_tracker() {
  // Under virtual time the tracker would check the real machine at made-up moments, and its timer
  // would be one more for tests to account for: virtual time is for tests, so it stays off.
  if (timers_.is_virtual()) return;
  const double threshold = options_.memory_threshold.value_or(0.9);
  memory_tracker_ = std::make_unique<MemoryTracker>(
      timers_, options_.memory_check_interval.value_or(std::chrono::milliseconds{3000}), threshold,
      [this](std::string reason) { termination_.terminate(std::move(reason)); },
      [this](LogLevel level, std::string text) { log_.log(level, "system.init", "_", TraceId{}, std::move(text)); });
  memory_tracker_->start();
}

void SystemCore::stop_memory_tracker() {
  if (memory_tracker_) memory_tracker_->stop();
}

// --- the hooks batteries reach the system through (elfin/internal/system_hooks.hpp) -----------

std::shared_ptr<void> system_extension(SystemCore& system, std::string_view name,
                                       const std::function<std::shared_ptr<void>()>& make) {
  return system.extensions().get(name, make);
}
void on_system_shutdown(SystemCore& system, std::function<void()> hook) {
  system.extensions().add_shutdown_hook(std::move(hook));
}
void on_scrape(SystemCore& system, ScrapeCollector collect) {
  system.extensions().add_scrape_collector(std::move(collect));
}
void set_remote_router(SystemCore& system, RemoteRouter* router) { system.set_remote_router(router); }
bool set_idle_waiter(SystemCore& system, IdleWaiter* waiter) { return system.scheduler().set_idle_waiter(waiter); }
bool flush_after_run(std::shared_ptr<RunEndFlush> target) { return Scheduler::defer_to_run_end(std::move(target)); }
std::uint16_t node_no_of(const SystemCore& system) { return system.node_no(); }
GroupRuntime* find_group(const SystemCore& system, std::string_view name) { return system.find_group(name); }
GroupRuntime* group_by_no(const SystemCore& system, std::uint8_t group_no) { return system.group(group_no); }
TimerService& timers_of(SystemCore& system) { return system.timers(); }
std::chrono::steady_clock::time_point system_now(const GroupRuntime& group) { return group.system().timers().now(); }
void submit_blocking(const GroupRuntime& group, std::function<void()> job) {
  group.system().blocking_pool().submit(std::move(job));
}
bool blocking_runs_inline(const GroupRuntime& group) { return group.system().options().virtual_time; }

QuiescenceHold::QuiescenceHold(SystemCore& system) : scheduler_(&system.scheduler()) { scheduler_->hold(); }
QuiescenceHold::~QuiescenceHold() {
  if (scheduler_ != nullptr) scheduler_->release();
}

ScheduleBatch::ScheduleBatch(SystemCore& system) : system_(system) { system_.scheduler().begin_batch(); }
ScheduleBatch::~ScheduleBatch() { system_.scheduler().end_batch(); }
void ScheduleBatch::flush() { system_.scheduler().flush_batch(); }

}  // namespace elfin::detail
