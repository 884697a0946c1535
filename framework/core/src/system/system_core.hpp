// SystemCore: a running system behind the `System` handle. It owns the parts and wires them
// together; each job lives in its own class:
//   groups and direct addressing   here (groups_, resolve_addr) and AddressBook (routing/)
//   running actors                 Scheduler (scheduling/), TimerService, SignalDispatcher
//   blocking work off the workers  BlockingPool (scheduling/)
//   an actor's life                actor/lifecycle.hpp
//   stopping                       Termination (termination/)
//   observing                      DumpStorage, MetricsStorage, LogSink, MemoryTracker (observers/)
//   batteries' per-system state    Extensions (system/)
//
// Time: `timers()` is the system's time base (real, or virtual with `StartOptions::virtual_time`);
// `advance_time` drives virtual time, settling the system between timers.
//
// Thread safety: the accessors from any thread; add_group and the enable_* calls before the start.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/system.hpp>

#include "observers/log_sink.hpp"
#include "observers/memory_tracker.hpp"
#include "observers/metrics_storage.hpp"
#include "routing/address_book.hpp"
#include "scheduling/blocking_pool.hpp"
#include "scheduling/scheduler.hpp"
#include "sources/signal_dispatcher.hpp"
#include "system/extensions.hpp"
#include "termination/termination.hpp"

namespace elfin::detail {

class SystemCore {
 public:
  explicit SystemCore(StartOptions options);
  SystemCore(const SystemCore&) = delete;
  SystemCore& operator=(const SystemCore&) = delete;
  ~SystemCore();

  [[nodiscard]] std::uint16_t node_no() const { return options_.node_no; }
  [[nodiscard]] const StartOptions& options() const { return options_; }
  [[nodiscard]] Scheduler& scheduler() { return scheduler_; }
  [[nodiscard]] BlockingPool& blocking_pool() { return blocking_; }
  [[nodiscard]] AddressBook& address_book() { return book_; }
  [[nodiscard]] TimerService& timers() { return timers_; }
  /// Delivers Unix signals to Signal sources (its thread starts with the first subscription).
  [[nodiscard]] SignalDispatcher& signals() { return signals_; }
  [[nodiscard]] Termination& termination() { return termination_; }
  [[nodiscard]] const Termination& termination() const { return termination_; }
  [[nodiscard]] LogSink& log_sink() { return log_; }
  [[nodiscard]] const LogSink& log_sink() const { return log_; }
  [[nodiscard]] Extensions& extensions() { return extensions_; }
  [[nodiscard]] const Extensions& extensions() const { return extensions_; }

  /// Virtual time only: moves time forward by `by`, firing due timers in order and waiting (up to
  /// `settle_timeout` of real time each) for the system to be quiescent before the first timer and
  /// after each instant's timers. One caller at a time.
  [[nodiscard]] Result<void, TimeError> advance_time(std::chrono::nanoseconds by,
                                                     std::chrono::milliseconds settle_timeout);

  void add_group(std::unique_ptr<GroupRuntime> group) { groups_.push_back(std::move(group)); }
  [[nodiscard]] const std::vector<std::unique_ptr<GroupRuntime>>& groups() const { return groups_; }
  [[nodiscard]] GroupRuntime* group(std::uint8_t group_no) const;
  [[nodiscard]] GroupRuntime* find_group(std::string_view name) const;
  /// Turns dumping on for every group (the topology has `system.dumpers`). Before the start.
  void enable_dumping(std::size_t capacity);
  [[nodiscard]] dumping::DumpStorage* dump_storage() const { return dump_storage_.get(); }
  /// Turns telemetry on for every group (the topology has `system.telemeters`). Before the start.
  void enable_telemetry();
  [[nodiscard]] MetricsStorage* metrics() const { return metrics_.get(); }

  /// Direct delivery target resolution; an error if the address names nothing alive.
  [[nodiscard]] std::optional<SendErrorKind> resolve_addr(Addr to, const Envelope& envelope, Targets& out) const;
  /// Sends a control message to a whole group from outside any actor (never waits).
  void send_to_group(GroupRuntime& group, Envelope envelope);
  void set_remote_router(RemoteRouter* router) { remote_router_.store(router, std::memory_order_release); }

  /// Logs failures and alarms, tells `StartOptions::on_status` and the group's status subscribers.
  void report_status(const ActorCell& cell, const ActorStatus& status);

  /// Starts the memory tracker if the options ask for one (after the scheduler started).
  void start_memory_tracker();
  void stop_memory_tracker();

 private:
  StartOptions options_;
  // Batteries' per-system state: destroyed last, after every actor and thread that may use it.
  Extensions extensions_;
  std::atomic<RemoteRouter*> remote_router_{nullptr};
  AddressBook book_;
  std::unique_ptr<dumping::DumpStorage> dump_storage_;  // before groups_: they point into it
  std::unique_ptr<MetricsStorage> metrics_;             // likewise
  std::vector<std::unique_ptr<GroupRuntime>> groups_;
  LogSink log_{*this};
  Scheduler scheduler_;
  BlockingPool blocking_;  // after scheduler_: its jobs wake actors until it is joined
  TimerService timers_;
  SignalDispatcher signals_;  // destroyed early: stops delivering before anything else goes
  std::unique_ptr<MemoryTracker> memory_tracker_;
  Termination termination_{*this};  // destroyed first: its thread uses everything above
};

}  // namespace elfin::detail
