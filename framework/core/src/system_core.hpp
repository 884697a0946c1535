// SystemCore: the state of a running system behind the `System` handle — groups, address book,
// scheduler, and the termination sequence.
//
// Time: `timers()` is the system's time base (real, or virtual with `StartOptions::virtual_time`);
// `advance_time` drives virtual time, settling the system between timers.
//
// Termination has two phases (user groups, then `system.*` groups). Each: stop spawning (which
// also abandons pending restarts), send a polite Terminate; a timer sends Terminate::closing()
// after `terminate_closing_after` and another gives up on the phase after
// `terminate_give_up_after`. The stages run on the system's clock, so under virtual time one
// `advance_time` plays them out. The first phase begins on the thread that calls `terminate`
// (its timer exists once `terminate` returns); a terminator thread waits for each phase to
// empty, begins the next and finally marks the system terminated. External groups (test proxies)
// have no coroutine to finish and are not waited for.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/logging.hpp>
#include <elfin/system.hpp>
#include "metrics_storage.hpp"

#include "address_book.hpp"
#include "memory_tracker.hpp"
#include "scheduler.hpp"
#include "signal_dispatcher.hpp"

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
  [[nodiscard]] AddressBook& address_book() { return book_; }
  [[nodiscard]] TimerService& timers() { return timers_; }
  /// Delivers Unix signals to Signal sources (its thread starts with the first subscription).
  [[nodiscard]] SignalDispatcher& signals() { return signals_; }

  /// Virtual time only: moves time forward by `by`, firing due timers in order and waiting (up to
  /// `settle_timeout` of real time each) for the system to be quiescent before the first timer and
  /// after each instant's timers. One caller at a time.
  [[nodiscard]] Result<void, TimeError> advance_time(std::chrono::nanoseconds by,
                                                     std::chrono::milliseconds settle_timeout);

  void add_group(std::unique_ptr<GroupRuntime> group) { groups_.push_back(std::move(group)); }
  /// Turns dumping on for every group (the topology has `system.dumpers`). Before the start.
  void enable_dumping(std::size_t capacity);
  [[nodiscard]] dumping::DumpStorage* dump_storage() const { return dump_storage_.get(); }
  /// Turns telemetry on for every group (the topology has `system.telemeters`). Before the start.
  void enable_telemetry();
  [[nodiscard]] MetricsStorage* metrics() const { return metrics_.get(); }
  [[nodiscard]] const std::vector<std::unique_ptr<GroupRuntime>>& groups() const { return groups_; }
  [[nodiscard]] GroupRuntime* group(std::uint8_t group_no) const;
  [[nodiscard]] GroupRuntime* find_group(std::string_view name) const;

  /// Direct delivery target resolution; an error if the address names nothing alive.
  [[nodiscard]] std::optional<SendErrorKind> resolve_addr(Addr to, const Envelope& envelope, Targets& out) const;
  /// Sends a control message to a whole group from outside any actor (never waits).
  void send_to_group(GroupRuntime& group, Envelope envelope);

  void actor_registered();
  void actor_finished(ActorCell& cell);
  [[nodiscard]] std::size_t live_actors() const { return live_actors_.load(std::memory_order_acquire); }
  void report_status(const ActorCell& cell, const ActorStatus& status);

  void terminate(std::string reason);
  /// Stops at once: workers and timers first, then every actor's mailbox and frame (see System::kill).
  void kill(std::string reason);

  /// Routes records to the logger group from now on (the topology has `system.loggers`).
  void enable_logger(GroupRuntime& loggers) { logger_ = &loggers; }
  /// Sends a record to the logger without waiting (lost, and counted, if its mailbox is full), or
  /// writes it to stderr when there is no logger. Counts it as emitted. Any thread.
  void log(LogLevel level, std::string_view group, std::string_view key, TraceId trace_id, std::string text);
  void count_limited_log(LogLevel level) { log_limited_[static_cast<std::size_t>(level)].fetch_add(1); }
  [[nodiscard]] LoggingCounters logging_counters() const;
  /// See system_hooks.hpp.
  [[nodiscard]] std::shared_ptr<void> extension(std::string_view name,
                                                const std::function<std::shared_ptr<void>()>& make);
  void set_remote_router(RemoteRouter* router) { remote_router_.store(router, std::memory_order_release); }
  void add_shutdown_hook(std::function<void()> hook);
  void add_scrape_collector(ScrapeCollector collect);
  /// The batteries' collectors (a copy: they run without the lock, so one may be added meanwhile).
  [[nodiscard]] std::vector<ScrapeCollector> scrape_collectors() const;
  /// Terminates the system and marks it failed (`System::failure`).
  void fail(std::string reason);
  [[nodiscard]] std::optional<std::string> failure() const;
  void join();
  bool join_for(std::chrono::milliseconds timeout);
  /// Starts the memory tracker if the options ask for one (after the scheduler started).
  void start_memory_tracker();

 private:
  [[nodiscard]] std::vector<GroupRuntime*> phase_groups(bool system_phase) const;
  /// Stage one of a phase: stop spawning, polite Terminate, the timer of stage two.
  void begin_phase(bool system_phase, const std::string& reason);
  /// Stage two (a timer callback): Terminate::closing(), the timer that gives up.
  void close_phase(std::uint64_t phase, const std::vector<GroupRuntime*>& groups, const std::string& reason);
  void termination_sequence(std::string reason);

  StartOptions options_;
  // Batteries' per-system state: destroyed last, after every actor and thread that may use it.
  std::mutex extensions_mu_;
  std::vector<std::pair<std::string, std::shared_ptr<void>>> extensions_;  // guarded by extensions_mu_
  std::vector<std::function<void()>> shutdown_hooks_;                      // guarded by extensions_mu_
  // Its own mutex, not extensions_mu_: a scrape has only a const system.
  mutable std::mutex collectors_mu_;
  std::vector<ScrapeCollector> scrape_collectors_;  // guarded by collectors_mu_
  std::atomic<RemoteRouter*> remote_router_{nullptr};
  AddressBook book_;
  std::unique_ptr<dumping::DumpStorage> dump_storage_;  // before groups_: they point into it
  std::unique_ptr<MetricsStorage> metrics_;             // likewise
  std::vector<std::unique_ptr<GroupRuntime>> groups_;
  Scheduler scheduler_;
  TimerService timers_;
  SignalDispatcher signals_;  // destroyed first: stops delivering before anything else goes
  std::atomic<std::size_t> live_actors_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;          // actor finished / termination done
  bool terminating_ = false;            // guarded by mu_
  bool terminated_ = false;             // guarded by mu_
  std::optional<std::string> failure_;  // guarded by mu_
  // The phase in progress (0: none); stage timers of an earlier phase see a different number
  // and do nothing.
  std::uint64_t phase_ = 0;                // guarded by mu_
  std::uint64_t phases_begun_ = 0;         // guarded by mu_
  bool phase_gave_up_ = false;             // guarded by mu_
  bool killed_ = false;                    // guarded by mu_; a termination in progress stops waiting
  TimerService::TimerId stage_timer_ = 0;  // guarded by mu_
  std::thread terminator_;
  std::unique_ptr<MemoryTracker> memory_tracker_;
  GroupRuntime* logger_ = nullptr;  // set before the start
  std::array<std::atomic<std::uint64_t>, kLogLevels> log_emitted_{};
  std::array<std::atomic<std::uint64_t>, kLogLevels> log_limited_{};
  std::array<std::atomic<std::uint64_t>, kLogLevels> log_lost_{};
};

/// Runs when an actor's exec has finished: status, mailbox, group and address book bookkeeping.
void finish_actor(ActorCell& cell);

}  // namespace elfin::detail
