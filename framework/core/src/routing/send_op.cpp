#include <elfin/detail/send_op.hpp>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/request.hpp>

#include "system/system_core.hpp"

namespace elfin::detail {

SendOp::SendOp(GroupRuntime& from, Envelope envelope, SendMode mode) : envelope_(std::move(envelope)), mode_(mode) {
  for (const auto& route : from.routes()) {
    if (route.filter(envelope_)) route.to->resolve(envelope_, targets_);
  }
  if (targets_.empty() && !targets_.absorbed()) resolve_error_ = SendErrorKind::NoRoute;
}

SendOp::SendOp(SystemCore& system, Addr to, Envelope envelope, SendMode mode)
    : envelope_(std::move(envelope)), mode_(mode) {
  // The block is not shared yet (it was just made, or taken back from a failed push).
  if (envelope_.valid()) EnvelopeAccess::block(envelope_)->recipient = to;
  resolve_error_ = system.resolve_addr(to, envelope_, targets_);
}

bool SendOp::run(ActorCell* waiter) {
  if (finished_) return true;
  RequestStateBase* request = envelope_.valid() ? EnvelopeAccess::block(envelope_)->request.get() : nullptr;
  const bool bounded = mode_ != SendMode::Unbounded;
  while (next_ < targets_.size()) {
    ActorCell* target = targets_[next_];
    const bool last = next_ + 1 == targets_.size();
    // The last recipient gets the original handle: a unicast does no reference counting at all.
    Envelope copy = last ? std::move(envelope_) : EnvelopeAccess::share(envelope_);
    if (request != nullptr) {
      request->add_delivery();
      EnvelopeAccess::mark_obligated(copy);
    }
    const auto pushed = target->mailbox().push(copy, bounded, mode_ == SendMode::Bounded ? waiter : nullptr);
    if (pushed == Mailbox::PushResult::Ok) {
      target->notify();
      any_ok_ = true;
      ++next_;
      continue;
    }
    if (request != nullptr) {
      EnvelopeAccess::discharge(copy);
      request->cancel_delivery();
    }
    if (last) envelope_ = std::move(copy);  // keep it for the retry
    if (pushed == Mailbox::PushResult::Full) {
      if (mode_ == SendMode::Bounded && (waiter != nullptr || stop_at_full_)) return false;  // woken when a slot frees
      any_full_ = true;
    }
    ++next_;
  }
  finished_ = true;
  return true;
}

bool SendOp::run_until_full() {
  stop_at_full_ = true;
  const bool done = run(nullptr);
  stop_at_full_ = false;
  return done;
}

Result<void, SendErrorKind> SendOp::result() const {
  if (resolve_error_) return Err{*resolve_error_};
  if (any_ok_ || targets_.absorbed()) return {};
  return Err{any_full_ ? SendErrorKind::Full : SendErrorKind::Closed};
}

}  // namespace elfin::detail
