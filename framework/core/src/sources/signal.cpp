#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/signal_core.hpp>

#include "sources/signal_dispatcher.hpp"
#include "system/system_core.hpp"

namespace elfin::detail {

void SignalCore::attach(ActorCell& cell) {
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    cell_ = cell.weak_from_this();
  }
  cell.group().system().signals().subscribe(signo_, weak_from_this());
}

void SignalCore::on_signal() {
  std::shared_ptr<ActorCell> cell;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    pending_ = true;
    cell = cell_.lock();
  }
  if (cell) cell->notify();
}

SourceBase::Poll SignalCore::poll(ActorCell& cell, Envelope& out) {
  {
    std::lock_guard lock(mu_);
    if (done_) return Poll::Done;
    if (!pending_) return Poll::Pending;
    pending_ = false;
  }
  out = make_message(cell);
  return Poll::Item;
}

void SignalCore::detach() {
  // The dispatcher drops expired subscribers; until then a terminated source ignores signals.
  std::lock_guard lock(mu_);
  done_ = true;
  pending_ = false;
}

bool SignalCore::finished() const {
  std::lock_guard lock(mu_);
  return done_;
}

}  // namespace elfin::detail
