// Timed requests: several requests from one actor, in flight at once, each answered by a deadline
// at the latest — what a broadcast (one request per pod, a pod that never answers must not hold up
// the others) needs. One request with a deadline is the core's `ctx.request_to(a, r).timeout(d)`;
// `timed_request` below is that, with a deadline instead of a duration. The core's request
// awaits one request at a time, so the several-at-once awaitable here is built on its request
// internals (the answer slot, the send operation, the request deadline).
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
#include <elfin/detail/request_deadline.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/detail/send_op.hpp>
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
    elfin::detail::RequestDeadline deadline;
    bool released = false;
  };

  TimedRequestsAwaitable(elfin::detail::ActorCell* self, std::vector<Ask> asks) : self_(self), asks_(std::move(asks)) {}
  TimedRequestsAwaitable(TimedRequestsAwaitable&&) noexcept = default;

  bool await_ready() { return progress(); }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  std::vector<Result<T, RequestError>> await_resume() {
    std::vector<Result<T, RequestError>> answers;
    answers.reserve(asks_.size());
    for (auto& ask : asks_) {
      ask.deadline.cancel();
      auto answer = ask.state->take_any();
      elfin::detail::observe_answer_delivered(*self_, *ask.state, answer);
      answers.push_back(std::move(answer));
    }
    return answers;
  }

 private:
  bool progress() {
    for (auto& ask : asks_) {
      // A full mailbox: woken when it has room, or when the deadline settled the request unsent.
      if (!ask.op.finished() && !ask.state->done() && !ask.op.run(self_)) return false;
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
    core::RequestDeadline expiry{self->group().system(), state, left};
    // A null address: routed from the sender's group, as `ctx.request(r)` is.
    auto op = to.is_null() ? core::SendOp{self->group(), std::move(envelope), core::SendMode::Bounded}
                           : core::SendOp{self->group().system(), to, std::move(envelope), core::SendMode::Bounded};
    pending.push_back({std::move(op), std::move(state), std::move(expiry), false});
  }
  return detail::TimedRequestsAwaitable<T>{self, std::move(pending)};
}

/// One request with a deadline (a null address: routed): the answer, or RequestError::TimedOut.
template <class C, class K, Request R>
Task<Result<typename R::Response, RequestError>> timed_request(Context<C, K> ctx, Addr to, R request,
                                                               std::chrono::steady_clock::time_point deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (to.is_null()) co_return co_await ctx.request(std::move(request)).timeout(left);
  co_return co_await ctx.request_to(to, std::move(request)).timeout(left);
}

}  // namespace elfin::actors::sharding
