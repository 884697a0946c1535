// TimerService: the time base of a running system. Everything time-based in the runtime (restart
// backoff, intervals, delays, termination stages that want it) reads `now()` and schedules with
// `schedule_at` / `schedule_after` here, never the steady clock directly.
//
// Real time: one timer thread (started with the first timer) sleeps until the earliest deadline
// and runs the due callbacks there, every timer due by then in one pass inside the fire batch (the
// system queues the actors they wake together, with one wake-up of a worker: many actors' ticks on
// one period grid cost one wake, not one each). Virtual time (`StartOptions::virtual_time`): time stands still
// and there is no thread; `advance_to` moves `now()` forward timer by timer, running callbacks on
// the advancing thread and letting the caller settle the system between them, so chains of timers
// play out in one call. Callbacks fire in deadline order, ties in scheduling order.
//
// A callback must be short and never block (typically: enqueue a message, wake an actor). It runs
// without the service's lock held, so it may schedule or cancel timers itself.
//
// Thread safety: every member may be called from any thread, except `advance_to` (one caller at a
// time, virtual time only). Destroying the service drops every pending timer without running it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include <elfin/result.hpp>
#include <elfin/time_error.hpp>

namespace elfin::detail {

class TimerService {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;
  using TimerId = std::uint64_t;

  /// Under virtual time the clock starts at `virtual_start` (the steady clock's now if unset), so
  /// several systems can share one time line.
  explicit TimerService(bool virtual_time = false, std::optional<TimePoint> virtual_start = std::nullopt);
  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;
  ~TimerService();

  /// Runs `fire` once at `when`: on the timer thread in real time, inside `advance_to` under
  /// virtual time. A deadline already passed fires as soon as possible (next advance in virtual
  /// time). Ids are never 0 and never reused.
  [[nodiscard]] TimerId schedule_at(TimePoint when, std::function<void()> fire);
  [[nodiscard]] TimerId schedule_after(std::chrono::nanoseconds delay, std::function<void()> fire);
  /// True if the timer had not fired and now never will. False for a timer that fired, is firing
  /// right now on another thread, was cancelled before, or never existed.
  bool cancel(TimerId id);
  /// Real time: `begin` runs on the timer thread before a pass of due callbacks, `end` after it
  /// (the system collects the actors they wake and queues them together). Set before the first
  /// `schedule_*`: the timer thread reads them unguarded.
  void set_fire_batch(std::function<void()> begin, std::function<void()> end);
  /// Real or virtual now.
  [[nodiscard]] TimePoint now() const;

  [[nodiscard]] bool is_virtual() const { return virtual_; }
  /// Timers scheduled and neither fired nor cancelled.
  [[nodiscard]] std::size_t pending() const;
  /// The deadline of the earliest pending timer (what `advance_to` would fire first).
  [[nodiscard]] std::optional<TimePoint> next_deadline() const;

  /// Virtual time only: moves `now()` to `until`. For each instant with due timers, in order: sets
  /// `now()` to it, fires every timer due then (including ones those callbacks add for the same
  /// instant), then calls `settle`; an error from `settle` stops the advance and is returned. Time
  /// never goes backwards: an `until` in the past changes nothing but still fires overdue timers.
  [[nodiscard]] Result<void, TimeError> advance_to(TimePoint until,
                                                   const std::function<Result<void, TimeError>()>& settle);

  /// Stops the timer thread and drops every pending timer (callbacks are destroyed, not run).
  /// Later `schedule_*` calls are accepted and never fire. Called by the system when it stops;
  /// never from a timer callback.
  void shutdown();

 private:
  using Key = std::pair<TimePoint, TimerId>;  // deadline order, ties in scheduling order

  void thread_main();
  /// Removes the earliest timer if it is due at or before `limit`.
  bool pop_due(TimePoint limit, Key& key, std::function<void()>& fire);

  const bool virtual_;
  std::function<void()> batch_begin_;  // set before the timer thread starts
  std::function<void()> batch_end_;
  mutable std::mutex mu_;
  std::condition_variable cv_;                        // the timer thread's wakeup
  std::map<Key, std::function<void()>> queue_;        // guarded by mu_
  std::unordered_map<TimerId, TimePoint> deadlines_;  // guarded by mu_; id -> key in queue_
  TimerId next_id_ = 1;                               // guarded by mu_
  bool stopping_ = false;                             // guarded by mu_
  std::thread thread_;                                // started lazily under mu_
  // Virtual now as ticks of Clock; written by the advancing thread, read anywhere. Relaxed is
  // enough for readers that only want a value; callbacks and schedulers synchronise through mu_.
  std::atomic<Clock::rep> virtual_now_;
};

class SystemCore;
/// The time base of `system` (for templates in public headers, which cannot see SystemCore).
[[nodiscard]] TimerService& timers_of(SystemCore& system);

}  // namespace elfin::detail
