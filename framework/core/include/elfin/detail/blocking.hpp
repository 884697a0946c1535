// The awaitable behind `co_await ctx.blocking(fn)`: `fn` runs on a thread of the system's
// blocking pool (never a worker), and its result, or the exception it threw, comes back to the
// awaiting coroutine on the actor's thread.
//
// The job and the awaitable share a BlockingState. The job stores the outcome, publishes it with
// a release store of `done_`, then wakes the actor; the awaitable's poll function reads `done_`
// with acquire, following the protocol of the other awaitables (awaitables.hpp). The job owns
// `fn`, the state and a Waker (which keeps the cell alive), so an actor that ends while the job
// runs leaves nothing dangling: the job finishes, stores into a state nobody reads, and its wake
// of the finished cell is a no-op.
//
// Under virtual time `fn` runs inline, on the actor's thread, inside `await_ready`: a simulated
// cluster then replays the same way for a seed, and quiescence never misses the work.
//
// Thread safety: the awaitable belongs to its actor; the state is shared with one pool thread.
#pragma once

#include <atomic>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/waker.hpp>

namespace elfin::detail {

/// Queues `job` on the blocking pool of `group`'s system (its threads start on first use).
void submit_blocking(const GroupRuntime& group, std::function<void()> job);
/// True under virtual time: blocking work then runs inline on the actor's thread.
[[nodiscard]] bool blocking_runs_inline(const GroupRuntime& group);

template <class T>
class BlockingState {
 public:
  using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

  template <class F>
  void run(F& fn) noexcept {
    try {
      if constexpr (std::is_void_v<T>) {
        fn();
        value_.emplace();
      } else {
        value_.emplace(fn());
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    done_.store(true, std::memory_order_release);
  }
  [[nodiscard]] bool done() const { return done_.load(std::memory_order_acquire); }
  T take() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) {
      if (!value_) throw std::logic_error("blocking work taken before it finished");
      return std::move(*value_);
    }
  }

 private:
  std::atomic<bool> done_{false};
  std::optional<Stored> value_;
  std::exception_ptr error_;
};

template <class F>
class [[nodiscard]] BlockingAwaitable {
 public:
  using Value = std::invoke_result_t<F&>;

  BlockingAwaitable(ActorCell* self, F fn) : self_(self), fn_(std::move(fn)) {}

  bool await_ready() {
    state_ = std::make_shared<BlockingState<Value>>();
    if (blocking_runs_inline(self_->group())) {
      state_->run(fn_);
      return true;
    }
    submit_blocking(self_->group(),
                    [state = state_, fn = std::move(fn_), waker = Waker{self_->shared_from_this()}]() mutable {
                      state->run(fn);
                      waker.wake();
                    });
    return false;
  }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  Value await_resume() { return state_->take(); }

 private:
  static bool poll(void* self) { return static_cast<BlockingAwaitable*>(self)->state_->done(); }

  ActorCell* self_;
  F fn_;
  std::shared_ptr<BlockingState<Value>> state_;
};

}  // namespace elfin::detail
