#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/delay_core.hpp>
#include <elfin/detail/group_runtime.hpp>

namespace elfin::detail {

void DelayCore::attach(ActorCell& cell) {
  std::lock_guard lock(mu_);
  if (done_) return;
  cell_ = cell.weak_from_this();
  trace_ = cell.trace_id();
  timers_ = &timers_of(cell.group().system());
  std::weak_ptr<DelayCore> self = weak_from_this();
  timer_ = timers_->schedule_after(delay_, [self] {
    if (auto state = self.lock()) state->on_fire();
  });
}

void DelayCore::on_fire() {
  std::shared_ptr<ActorCell> cell;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    fired_ = true;
    timer_ = 0;
    cell = cell_.lock();
  }
  if (cell) cell->notify();
}

SourceBase::Poll DelayCore::poll(ActorCell& cell, Envelope& out) {
  TraceId trace;
  {
    std::lock_guard lock(mu_);
    if (done_) return Poll::Done;
    if (!fired_) return Poll::Pending;
    done_ = true;  // the one message: the source is finished once it is taken
    trace = trace_;
  }
  out = make_message(cell, trace);
  return Poll::Item;
}

void DelayCore::detach() {
  std::lock_guard lock(mu_);
  done_ = true;
  if (timers_ != nullptr && timer_ != 0) timers_->cancel(timer_);
  timer_ = 0;
  timers_ = nullptr;
}

bool DelayCore::finished() const {
  std::lock_guard lock(mu_);
  return done_;
}

}  // namespace elfin::detail
