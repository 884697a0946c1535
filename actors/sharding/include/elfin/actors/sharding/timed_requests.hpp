// Timed requests: several requests from one actor, in flight at once, each answered by a deadline
// at the latest — what broadcasts (one request per pod) and request_entity (an owner that holds
// the request and never answers) need, and what an actor's `co_await ctx.request(r)` does not give:
// it waits for its one answer however long that takes.
//
//   std::vector<std::pair<Addr, GetLoad>> asks = {{pod_a, GetLoad{}}, {pod_b, GetLoad{}}};
//   auto answers = co_await elfin::actors::sharding::timed_requests(ctx, std::move(asks), deadline);
//   // answers[i]: the answer of asks[i], or RequestError::TimedOut if none came by `deadline`
//
// Every request is sent first (in order; a full mailbox makes the sender wait, as `send` does),
// then the actor waits until each one is answered or expired. A request that expired may still
// be handled by its recipient; its late answer is dropped. Deadlines run on the system's timer,
// so they follow virtual time in tests that use it.
//
// This is the one place in the sharding actors built on the core's request internals (the answer
// slot, the send operation, the timer service): the core's public request has no deadline. If it
// gains one (`ctx.request_to(a, r).deadline(t)`), this file becomes a loop over it.
//
// Thread safety: runs inside the calling actor; the timer thread only expires answer slots, which
// lock themselves.
#pragma once

#include <chrono>
#include <coroutine>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <elfin/addr.hpp>
#include <elfin/context.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/detail/waker.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>

namespace elfin::actors::sharding {

namespace detail {

/// The awaitable behind timed_requests: sends, then waits for every answer slot to settle.
template <class T>
class TimedRequestsAwaitable {
 public:
  struct Ask {
    elfin::detail::SendOp op;
    std::shared_ptr<elfin::detail::RequestState<T>> state;
    elfin::detail::TimerService::TimerId timer = 0;
    bool released = false;
  };

  TimedRequestsAwaitable(elfin::detail::ActorCell* self, std::vector<Ask> asks) : self_(self), asks_(std::move(asks)) {}
  TimedRequestsAwaitable(TimedRequestsAwaitable&&) noexcept = default;

  bool await_ready() { return progress(); }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  std::vector<Result<T, RequestError>> await_resume() {
    auto& timers = elfin::detail::timers_of(self_->group().system());
    std::vector<Result<T, RequestError>> answers;
    answers.reserve(asks_.size());
    for (auto& ask : asks_) {
      if (ask.timer != 0) timers.cancel(ask.timer);
      auto answer = ask.state->take_any();
      elfin::detail::observe_answer_delivered(*self_, *ask.state, answer);
      answers.push_back(std::move(answer));
    }
    return answers;
  }

 private:
  bool progress() {
    for (auto& ask : asks_) {
      if (!ask.op.finished() && !ask.op.run(self_)) return false;  // a full mailbox: woken when it has room
      if (!ask.released) {
        ask.released = true;
        ask.state->release_sender();
      }
    }
    for (const auto& ask : asks_) {
      if (!ask.state->done()) return false;
    }
    return true;
  }
  static bool poll(void* self) { return static_cast<TimedRequestsAwaitable*>(self)->progress(); }

  elfin::detail::ActorCell* self_;
  std::vector<Ask> asks_;
};

}  // namespace detail

/// Sends every `asks[i].second` to `asks[i].first` (a null address: routed) now and gives their answers in the same
/// order: each the recipient's answer, or RequestError::TimedOut if it had none by `deadline`.
template <class C, class K, Request R>
[[nodiscard]] detail::TimedRequestsAwaitable<typename R::Response> timed_requests(
    Context<C, K> ctx, std::vector<std::pair<Addr, R>> asks, std::chrono::steady_clock::time_point deadline) {
  using T = typename R::Response;
  namespace core = elfin::detail;
  core::ActorCell* self = core::ActorCellAccess::cell(ctx);
  auto& timers = core::timers_of(self->group().system());
  // The timer service keeps its own clock (virtual in tests that ask for it): the deadline is
  // carried over as the time left.
  const auto left = deadline - std::chrono::steady_clock::now();
  std::vector<typename detail::TimedRequestsAwaitable<T>::Ask> pending;
  pending.reserve(asks.size());
  for (auto& [to, request] : asks) {
    auto state = std::make_shared<core::RequestState<T>>(false, core::Waker{self->shared_from_this()});
    Envelope envelope = Envelope::make(std::move(request), self->addr(), self->trace_id(), MessageKind::Request);
    core::EnvelopeAccess::block(envelope)->request = state;
    core::observe_sent(*self, envelope);
    std::weak_ptr<core::RequestStateBase> slot = state;
    const auto timer = timers.schedule_after(left, [slot] {
      if (auto expiring = slot.lock()) {
        expiring->expire(RequestError{RequestError::TimedOut, "no answer before the deadline"});
      }
    });
    // A null address: routed from the sender's group, as `ctx.request(r)` is.
    auto op = to.is_null() ? core::SendOp{self->group(), std::move(envelope), core::SendMode::Bounded}
                           : core::SendOp{self->group().system(), to, std::move(envelope), core::SendMode::Bounded};
    pending.push_back({std::move(op), std::move(state), timer, false});
  }
  return detail::TimedRequestsAwaitable<T>{self, std::move(pending)};
}

/// One request with a deadline: the answer, or RequestError::TimedOut.
template <class C, class K, Request R>
Task<Result<typename R::Response, RequestError>> timed_request(Context<C, K> ctx, Addr to, R request,
                                                               std::chrono::steady_clock::time_point deadline) {
  std::vector<std::pair<Addr, R>> one;
  one.emplace_back(to, std::move(request));
  auto answers = co_await timed_requests(ctx, std::move(one), deadline);
  co_return std::move(answers.front());
}

}  // namespace elfin::actors::sharding
