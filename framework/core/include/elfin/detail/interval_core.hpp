// IntervalCore: the message-independent part of `Interval<M>` — its schedule on the system's
// timer service, and the "a tick is due" flag the timer sets and the actor's `recv` clears.
//
// Ticks do not pile up: if the actor has not taken the last tick when the next one is due, the
// two are one. A tick that finds its deadline already passed (a stalled system) skips the missed
// periods, keeping the phase.
//
// Thread safety: the timer thread (or the advancing thread under virtual time) fires; everything
// else runs on the actor's thread. State shared by both is guarded by `mu_`; the wakeup goes
// through the actor's notify, which orders the flag before the actor's next poll.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include <elfin/detail/source.hpp>
#include <elfin/detail/timer_service.hpp>

namespace elfin::detail {

class IntervalCore : public SourceBase, public std::enable_shared_from_this<IntervalCore> {
 public:
  using Duration = std::chrono::nanoseconds;

  void attach(ActorCell& cell) override;
  Poll poll(ActorCell& cell, Envelope& out) override;
  void detach() override;
  [[nodiscard]] bool finished() const override;

  void start_after(Duration delay, Duration period);
  /// Ticks at the multiples of `period` on the system's clock (see Interval::start_on_grid).
  void start_on_grid(Duration period);
  void set_period(Duration period);
  void stop();
  void terminate();
  [[nodiscard]] bool is_terminated() const { return finished(); }

 protected:
  /// A new tick envelope (a copy of the message, a new trace id).
  virtual Envelope make_tick(ActorCell& cell) = 0;

 private:
  void arm_locked();
  void on_fire(std::uint64_t generation);

  mutable std::mutex mu_;
  std::weak_ptr<ActorCell> cell_;        // set at attach
  TimerService* timers_ = nullptr;       // set at attach, cleared by detach
  std::optional<Duration> start_delay_;  // start requested before attach
  bool start_on_grid_ = false;           // ... on the period's grid (start_delay_ unused then)
  Duration period_{0};
  TimerService::TimePoint next_at_{};  // the next tick's deadline (the phase)
  TimerService::TimerId timer_ = 0;    // 0: none armed
  std::uint64_t generation_ = 0;       // of the armed timer; older callbacks are stale
  bool running_ = false;
  bool due_ = false;
  bool terminated_ = false;
};

}  // namespace elfin::detail
