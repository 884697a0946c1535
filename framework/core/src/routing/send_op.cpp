#include <elfin/detail/send_op.hpp>

#include <atomic>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/request.hpp>

#include "system/system_core.hpp"

namespace elfin::detail {

namespace {

/// Into `target`'s mailbox, or through its group's DirectSink when the sender runs no actor
/// (`direct`) and the send respects capacity (the sink's room is its connection's credit).
Mailbox::PushResult deliver(ActorCell& target, Envelope& envelope, bool bounded, ActorCell* waiter, bool direct,
                            bool alone) {
  if (direct && bounded) {
    if (DirectSink* sink = target.group().direct_sink()) {
      switch (sink->carry(target, envelope, waiter, alone)) {
        case DirectSink::Outcome::Taken:
          return Mailbox::PushResult::Ok;
        case DirectSink::Outcome::Full:
          return Mailbox::PushResult::Full;
        case DirectSink::Outcome::Declined:
          break;
      }
    }
  }
  const auto pushed = target.mailbox().push(envelope, bounded, waiter);
  if (pushed == Mailbox::PushResult::Ok) target.notify();
  return pushed;
}

}  // namespace

SendOp::SendOp(GroupRuntime& from, Envelope envelope, SendMode mode) : envelope_(std::move(envelope)), mode_(mode) {
  routed_ = true;
  for (const auto& route : from.routes()) {
    if (route.filter(envelope_)) route.to->resolve(envelope_, targets_);
  }
  if (targets_.empty() && !targets_.absorbed()) resolve_error_ = SendErrorKind::NoRoute;
}

SendOp::SendOp(SystemCore& system, Addr to, Envelope envelope, SendMode mode)
    : envelope_(std::move(envelope)), mode_(mode) {
  // The recipient is what the network addresses a frame to, so it is always the address sent to.
  // Other references to the block are a dump's (which never reads the recipient) or, for an
  // envelope sent on by forward_envelope, the handles of a multicast's other recipients: those
  // must not be forwarded (see Context::try_forward_to).
  if (envelope_.valid()) EnvelopeAccess::block(envelope_)->recipient = to;
  routed_ = to.is_group();
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
    ActorCell* const wait_as = mode_ == SendMode::Bounded ? waiter : nullptr;
    auto pushed = deliver(*target, copy, bounded, wait_as, direct_, alone_);
    if (pushed == Mailbox::PushResult::Closed && routed_) {
      // The actor routing chose stopped for good since: close_for_good took it out of its group's
      // map before it closed the mailbox. The fence pairs with that close (a seq_cst RMW, which
      // reserve() read relaxed), so the lookup below sees the removal and finds or starts the
      // key's successor. An actor that closed its own mailbox is still in the map: no successor.
      std::atomic_thread_fence(std::memory_order_acquire);
      if (auto next = target->group().successor(*target, copy))
        pushed = deliver(*next, copy, bounded, wait_as, direct_, alone_);
    }
    if (pushed == Mailbox::PushResult::Ok) {
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

namespace elfin::detail {

Result<void, SendErrorKind> forward_envelope(SystemCore& system, Addr to, Envelope& envelope) {
  // The duty to answer moves with the envelope: the push below counts a delivery of its own, and
  // the one this handle was delivered with is settled only once that push succeeded, so the
  // requester never sees a moment with nobody owing it an answer.
  const bool obligated = EnvelopeAccess::obligated(envelope);
  std::shared_ptr<RequestStateBase> request = obligated ? EnvelopeAccess::block(envelope)->request : nullptr;
  EnvelopeAccess::discharge(envelope);
  SendOp op{system, to, std::move(envelope), SendMode::Unbounded};
  std::ignore = op.run(nullptr);
  auto result = op.result();
  if (result) {
    if (request) request->cancel_delivery();
    return result;
  }
  envelope = std::move(op).take_envelope();
  if (obligated) EnvelopeAccess::mark_obligated(envelope);
  return result;
}

}  // namespace elfin::detail
