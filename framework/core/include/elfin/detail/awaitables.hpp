// The awaitables behind `co_await ctx.send(...)`, `ctx.request(...)` and `ctx.recv()`.
//
// Each follows the same protocol with the worker (see actor_cell.hpp): try to finish in
// `await_ready`; otherwise record a poll function with the cell and suspend; the worker calls the
// poll function whenever the actor is woken and resumes the coroutine only once it returns true.
// None of them allocates a coroutine frame.
#pragma once

#include <coroutine>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/request_deadline.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/request.hpp>

namespace elfin::detail {

/// Delivers a SendOp, waiting while a mailbox is full; gives the kind of failure (the runtime's
/// own deliveries, whose message type it does not know).
class [[nodiscard]] SendOpAwaitable {
 public:
  SendOpAwaitable(ActorCell* self, SendOp op) : self_(self), op_(std::move(op)) {}
  bool await_ready() { return op_.run(self_); }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  Result<void, SendErrorKind> await_resume() const { return op_.result(); }

 protected:
  static bool poll(void* self) {
    auto* a = static_cast<SendOpAwaitable*>(self);
    return a->op_.run(a->self_);
  }
  ActorCell* self_;
  SendOp op_;
};

/// `co_await ctx.send(m)`: the message given back in the error if no mailbox took it.
template <Message M>
class [[nodiscard]] SendAwaitable : public SendOpAwaitable {
 public:
  using SendOpAwaitable::SendOpAwaitable;
  SendResult<M> await_resume() { return std::move(op_).template typed_result<M>(); }
};

/// Delivers a request, then waits for its answer(s). `All` selects `.all()` semantics.
template <class T, bool All>
class [[nodiscard]] RequestAwaitable {
 public:
  RequestAwaitable(ActorCell* self, SendOp op, std::shared_ptr<RequestState<T>> state, RequestDeadline deadline = {})
      : self_(self), op_(std::move(op)), state_(std::move(state)), deadline_(std::move(deadline)) {}
  bool await_ready() { return progress(); }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  auto await_resume() {
    deadline_.cancel();
    if (TraceId t = state_->response_trace_id(); t.is_valid()) self_->set_trace_id(t);
    if constexpr (All) {
      auto answers = state_->take_all();
      for (const auto& answer : answers) observe_answer_delivered(*self_, *state_, answer);
      return answers;
    } else {
      auto answer = state_->take_any();
      observe_answer_delivered(*self_, *state_, answer);
      return answer;
    }
  }

 private:
  bool progress() {
    if (!op_.finished()) {
      // Only the deadline settles a request before its sender released it: it expired while the
      // recipient's mailbox had no room, and the request was never delivered.
      if (state_->done()) return true;
      if (!op_.run(self_)) return false;
      state_->release_sender();
    }
    return state_->done();
  }
  static bool poll(void* self) { return static_cast<RequestAwaitable*>(self)->progress(); }
  ActorCell* self_;
  SendOp op_;
  std::shared_ptr<RequestState<T>> state_;
  RequestDeadline deadline_;
};

class [[nodiscard]] RecvAwaitable {
 public:
  explicit RecvAwaitable(ActorCell* self) : self_(self) {}
  bool await_ready() {
    if (!self_->consume_budget()) {
      yielding_ = true;  // let others run first; the message is taken when we come back
      self_->end_handling();
      return false;
    }
    return take();
  }
  void await_suspend(std::coroutine_handle<> h) {
    self_->suspend(h, &poll, this);
    if (yielding_) self_->request_yield();
  }
  std::optional<Envelope> await_resume() {
    if (closed_) return std::nullopt;
    return std::move(envelope_);
  }

 private:
  bool take() {
    switch (self_->take_next(envelope_)) {
      case PopResult::Item:
        return true;
      case PopResult::Closed:
        closed_ = true;
        return true;
      case PopResult::Empty:
        break;
    }
    return false;
  }
  static bool poll(void* self) { return static_cast<RecvAwaitable*>(self)->take(); }

  ActorCell* self_;
  Envelope envelope_;
  bool closed_ = false;
  bool yielding_ = false;
};

/// `co_await ctx.yield_now()`: requeue behind other runnable actors.
class [[nodiscard]] YieldAwaitable {
 public:
  explicit YieldAwaitable(ActorCell* self) : self_(self) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    self_->suspend(h, nullptr, nullptr);
    self_->request_yield();
  }
  void await_resume() const noexcept {}

 private:
  ActorCell* self_;
};

}  // namespace elfin::detail
