// Delay<M>: a source that sends the actor one `M` after a delay, then detaches itself.
//
//   ctx.attach(Delay(500ms, RetryNow{}));                 // fire and forget
//   auto delay = ctx.attach(Delay(30s, GiveUp{}));
//   delay.terminate();                                     // changed our mind: never delivered
//
// The clock starts when the delay is attached. The message continues the trace that was current
// when it was attached: a delay usually postpones part of the work the actor was doing then.
// There is no rescheduling; attach a new Delay instead. Under virtual time the message arrives
// as the test advances the clock past the deadline.
//
// Thread safety: a handle is used from its actor only.
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/delay_core.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>

namespace elfin {

namespace detail {
template <Message M>
class DelayState final : public DelayCore {
 public:
  DelayState(std::chrono::nanoseconds delay, M message) : DelayCore(delay), message_(std::move(message)) {}

 private:
  Envelope make_message(ActorCell& cell, TraceId trace) override {
    return detail::EnvelopeAccess::make_unqueued(std::move(message_), cell.addr(), trace);
  }
  M message_;
};
}  // namespace detail

template <Message M>
class Delay {
 public:
  Delay(std::chrono::nanoseconds delay, M message)
      : state_(std::make_shared<detail::DelayState<M>>(delay, std::move(message))) {}

  /// Cancels the delay if it has not delivered yet.
  void terminate() { state_->terminate(); }
  /// Delivered or terminated.
  [[nodiscard]] bool is_terminated() const { return state_->finished(); }

  [[nodiscard]] std::shared_ptr<detail::SourceBase> source_core() const { return state_; }

 private:
  std::shared_ptr<detail::DelayState<M>> state_;
};

}  // namespace elfin
