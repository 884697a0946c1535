#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/interval_core.hpp>

namespace elfin::detail {

namespace {
/// A zero or negative period would make the timer spin; the smallest period is one millisecond.
IntervalCore::Duration sane(IntervalCore::Duration period) {
  return period <= IntervalCore::Duration::zero() ? std::chrono::milliseconds(1) : period;
}

/// The next multiple of `period` on the clock after `now` (never `now` itself: a tick right at the
/// start would be one an actor did not wait for).
TimerService::TimePoint next_on_grid(TimerService::TimePoint now, IntervalCore::Duration period) {
  const auto since = std::chrono::duration_cast<IntervalCore::Duration>(now.time_since_epoch());
  return now + (period - since % period);
}
}  // namespace

void IntervalCore::attach(ActorCell& cell) {
  std::lock_guard lock(mu_);
  cell_ = cell.weak_from_this();
  timers_ = &timers_of(cell.group().system());
  if ((start_delay_ || start_on_grid_) && !terminated_) {
    next_at_ = start_on_grid_ ? next_on_grid(timers_->now(), period_) : timers_->now() + *start_delay_;
    start_delay_.reset();
    start_on_grid_ = false;
    running_ = true;
    arm_locked();
  }
}

void IntervalCore::start_after(Duration delay, Duration period) {
  std::lock_guard lock(mu_);
  if (terminated_) return;
  period_ = sane(period);
  due_ = false;
  start_on_grid_ = false;
  if (timers_ == nullptr) {  // not attached yet: the schedule starts at attach
    start_delay_ = delay;
    return;
  }
  next_at_ = timers_->now() + delay;
  running_ = true;
  arm_locked();
}

void IntervalCore::start_on_grid(Duration period) {
  std::lock_guard lock(mu_);
  if (terminated_) return;
  period_ = sane(period);
  due_ = false;
  if (timers_ == nullptr) {  // not attached yet: the schedule starts at attach
    start_delay_.reset();
    start_on_grid_ = true;
    return;
  }
  next_at_ = next_on_grid(timers_->now(), period_);
  running_ = true;
  arm_locked();
}

void IntervalCore::set_period(Duration period) {
  std::lock_guard lock(mu_);
  if (terminated_) return;
  const Duration old = period_;
  period_ = sane(period);
  if (!running_ || timers_ == nullptr) return;
  // The last tick (or the start) is the origin: next_at_ - old period.
  next_at_ = next_at_ - old + period_;
  if (const auto now = timers_->now(); next_at_ < now) next_at_ = now;
  arm_locked();
}

void IntervalCore::stop() {
  std::lock_guard lock(mu_);
  running_ = false;
  due_ = false;
  start_delay_.reset();
  start_on_grid_ = false;
  if (timers_ != nullptr && timer_ != 0) timers_->cancel(timer_);
  timer_ = 0;
  ++generation_;
}

void IntervalCore::terminate() {
  stop();
  std::lock_guard lock(mu_);
  terminated_ = true;
}

void IntervalCore::detach() {
  terminate();
  std::lock_guard lock(mu_);
  timers_ = nullptr;
}

bool IntervalCore::finished() const {
  std::lock_guard lock(mu_);
  return terminated_;
}

void IntervalCore::arm_locked() {
  if (timer_ != 0) timers_->cancel(timer_);
  // The callback holds the state weakly: a detached interval's pending timer keeps nothing alive.
  std::weak_ptr<IntervalCore> self = weak_from_this();
  // A timer that was already firing when it was cancelled still calls back; its generation is
  // stale by then and the call is ignored.
  const std::uint64_t generation = ++generation_;
  timer_ = timers_->schedule_at(next_at_, [self, generation] {
    if (auto state = self.lock()) state->on_fire(generation);
  });
}

void IntervalCore::on_fire(std::uint64_t generation) {
  std::shared_ptr<ActorCell> cell;
  {
    std::lock_guard lock(mu_);
    if (generation != generation_ || !running_ || terminated_ || timers_ == nullptr) return;
    due_ = true;
    next_at_ += period_;
    // A stalled system (real time only): skip the missed ticks, keep the phase.
    if (const auto now = timers_->now(); next_at_ <= now) {
      next_at_ += period_ * ((now - next_at_) / period_ + 1);
    }
    timer_ = 0;
    arm_locked();
    cell = cell_.lock();
  }
  if (cell) cell->notify();
}

SourceBase::Poll IntervalCore::poll(ActorCell& cell, Envelope& out) {
  {
    std::lock_guard lock(mu_);
    if (terminated_) return Poll::Done;
    if (!due_) return Poll::Pending;
    due_ = false;
  }
  out = make_tick(cell);
  return Poll::Item;
}

}  // namespace elfin::detail
