// Task<T>: the coroutine type of actors and of everything they `co_await`.
//
// A Task is lazy (it starts when awaited, or when the runtime first resumes an actor), move-only,
// and owns its coroutine frame: destroying a Task destroys the frame. Awaiting a Task transfers
// control symmetrically, so deep `co_await` chains do not grow the thread's stack. An exception
// thrown inside a Task is rethrown where it is awaited; escaping an actor's `exec`, it marks the
// actor Failed.
//
// Only the runtime resumes actors: a Task must not be resumed from a foreign thread. Write
// coroutines as free or member functions taking parameters by value — a capturing lambda
// coroutine dies with its lambda object.
//
// Thread safety: distinct objects safe; one object only from its actor.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

#include <elfin/detail/block_pool.hpp>

namespace elfin {

template <class T = void>
class Task;

namespace detail {

struct TaskPromiseBase {
  std::coroutine_handle<> continuation;
  std::exception_ptr exception;

  // Frames come from the block pool: every actor has one, and so has every Task it awaits.
  static void* operator new(std::size_t size) { return allocate_block(size); }
  static void operator delete(void* frame, std::size_t size) noexcept { free_block(frame, size); }

  std::suspend_always initial_suspend() noexcept { return {}; }

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      // Resume whoever awaited us; a top-level task (an actor's exec) has no continuation and
      // returns control to the worker, which then sees `done()`.
      auto next = h.promise().continuation;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { exception = std::current_exception(); }
};

template <class T>
struct TaskPromise : TaskPromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    if (exception) std::rethrow_exception(exception);
    if (!value) std::terminate();  // finished without an exception, so return_value ran: never taken
    return std::move(*value);
  }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() {
    if (exception) std::rethrow_exception(exception);
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::TaskPromise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) noexcept : handle_(h) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(handle_); }
  [[nodiscard]] bool done() const noexcept { return handle_ && handle_.done(); }
  [[nodiscard]] Handle handle() const noexcept { return handle_; }
  /// The exception the finished task ended with, if any.
  [[nodiscard]] std::exception_ptr exception() const noexcept { return handle_.promise().exception; }
  /// The result of a finished task (rethrows its exception).
  decltype(auto) result() { return handle_.promise().take(); }

  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle handle;
      bool await_ready() noexcept { return !handle || handle.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        handle.promise().continuation = awaiting;
        return handle;
      }
      T await_resume() { return handle.promise().take(); }
    };
    return Awaiter{handle_};
  }

 private:
  void reset() noexcept {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  Handle handle_;
};

namespace detail {
template <class T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
  return Task<T>{std::coroutine_handle<TaskPromise<T>>::from_promise(*this)};
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
  return Task<void>{std::coroutine_handle<TaskPromise<void>>::from_promise(*this)};
}
}  // namespace detail

}  // namespace elfin
