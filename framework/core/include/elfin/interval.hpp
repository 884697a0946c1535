// Interval<M>: a source that sends the actor a copy of `M` every period.
//
//   auto interval = ctx.attach(Interval(FlushTick{}));   // inactive until started
//   interval.start(5s);                                   // first tick 5 s from now
//   interval.start_after(1s, 5s);                         // first tick after 1 s, then every 5 s
//   interval.start_on_grid(100ms);                        // at the clock's multiples of 100 ms
//   interval.set_period(10s);   // on ConfigUpdated: new period, same phase (the last tick stays the origin)
//   interval.stop();            // no more ticks until started again
//   interval.terminate();       // detached for good
//
// `start` and `start_after` reset the origin to now; `start_on_grid` puts it on the period's grid
// (the clock's multiples of the period), the first tick within one period. Intervals on the same
// grid tick at the same moments, and the timer thread wakes once for all of them and queues their
// actors together: a thousand actors ticking every 50 ms (Raft partitions) cost one timer wake-up
// and one worker wake-up per tick rather than a thousand. `set_period` keeps the origin: the next
// tick comes one new period after the last one (or at once if that moment has passed). Each tick starts a new trace.
// Ticks do not pile up behind a busy actor: at most one is waiting at a time. Under virtual time
// (`StartOptions::virtual_time`) ticks happen as the test advances the clock.
//
// The interval lives as long as the actor (or until `terminate`); the handle is a cheap shared
// reference, and dropping it does not detach the source.
//
// Thread safety: a handle is used from its actor only.
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/interval_core.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

namespace detail {
template <Message M>
class IntervalState final : public IntervalCore {
 public:
  explicit IntervalState(M message) : message_(std::move(message)) {}

 private:
  Envelope make_tick(ActorCell& cell) override {
    return detail::EnvelopeAccess::make_unqueued(M(message_), cell.addr(), TraceId::generate());
  }
  const M message_;
};
}  // namespace detail

template <Message M>
class Interval {
 public:
  using Duration = std::chrono::nanoseconds;

  explicit Interval(M message) : state_(std::make_shared<detail::IntervalState<M>>(std::move(message))) {}

  /// Ticks every `period`, the first one `period` from now. Restarts a running interval.
  void start(Duration period) { state_->start_after(period, period); }
  /// Ticks first after `delay`, then every `period`.
  void start_after(Duration delay, Duration period) { state_->start_after(delay, period); }
  /// Ticks at the multiples of `period` on the system's clock (the first within one period, never
  /// at once), then every `period`. Restarts a running interval.
  void start_on_grid(Duration period) { state_->start_on_grid(period); }
  /// Changes the period without moving the phase; a stopped interval keeps it for its next start.
  void set_period(Duration period) { state_->set_period(period); }
  /// No more ticks (a tick not yet received is dropped) until `start*` again.
  void stop() { state_->stop(); }
  /// Detaches the source for good.
  void terminate() { state_->terminate(); }
  [[nodiscard]] bool is_terminated() const { return state_->is_terminated(); }

  [[nodiscard]] std::shared_ptr<detail::SourceBase> source_core() const { return state_; }

 private:
  std::shared_ptr<detail::IntervalState<M>> state_;
};

}  // namespace elfin
