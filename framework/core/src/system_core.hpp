// SystemCore: the state of a running system behind the `System` handle — groups, address book,
// scheduler, and the termination sequence.
//
// Time: `timers()` is the system's time base (real, or virtual with `StartOptions::virtual_time`);
// `advance_time` drives virtual time, settling the system between timers.
//
// Termination runs on its own thread, in two phases (user groups, then `system.*` groups):
// stop spawning, send a polite Terminate, wait up to `terminate_closing_after`, send
// Terminate::closing(), wait up to `terminate_give_up_after`, move on. External groups (test
// proxies) have no coroutine to finish and are not waited for.
#pragma once

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
#include <elfin/detail/metrics_storage.hpp>
#include <elfin/dumping.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/system.hpp>

#include "address_book.hpp"
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
  [[nodiscard]] Result<void, std::string> advance_time(std::chrono::nanoseconds by,
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
  [[nodiscard]] std::optional<SendError> resolve_addr(Addr to, const Envelope& envelope, Targets& out) const;
  /// Sends a control message to a whole group from outside any actor (never waits).
  void send_to_group(GroupRuntime& group, Envelope envelope);

  void actor_registered();
  void actor_finished(ActorCell& cell);
  [[nodiscard]] std::size_t live_actors() const { return live_actors_.load(std::memory_order_acquire); }
  void report_status(const ActorCell& cell, const ActorStatus& status);

  void terminate(std::string reason);
  void join();
  bool join_for(std::chrono::milliseconds timeout);

 private:
  void termination_sequence(std::string reason);
  /// Waits until every listed group has no actors, or the deadline passes.
  bool wait_groups_empty(const std::vector<GroupRuntime*>& groups, std::chrono::steady_clock::time_point deadline);

  StartOptions options_;
  AddressBook book_;
  std::unique_ptr<dumping::DumpStorage> dump_storage_;  // before groups_: they point into it
  std::unique_ptr<MetricsStorage> metrics_;              // likewise
  std::vector<std::unique_ptr<GroupRuntime>> groups_;
  Scheduler scheduler_;
  TimerService timers_;
  SignalDispatcher signals_;  // destroyed first: stops delivering before anything else goes
  std::atomic<std::size_t> live_actors_{0};

  std::mutex mu_;
  std::condition_variable cv_;  // actor finished / termination done
  bool terminating_ = false;    // guarded by mu_
  bool terminated_ = false;     // guarded by mu_
  std::thread terminator_;
};

/// Runs when an actor's exec has finished: status, mailbox, group and address book bookkeeping.
void finish_actor(ActorCell& cell);

}  // namespace elfin::detail
