// RequestState: the shared answer slot of one request (see elfin/request.hpp for the semantics).
//
// Split from request.hpp so that message vtables (impl/message.hpp) can create and fill states
// of any request type — the network answers a remote requester and applies remote answers
// without knowing the types at compile time.
//
// Thread safety: shared between the requester and the responders; locks internally.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>  // std::lock_guard
#include <optional>
#include <utility>
#include <vector>

#include <elfin/detail/spin_lock.hpp>
#include <elfin/detail/waker.hpp>
#include <elfin/errors.hpp>
#include <elfin/result.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

struct MessageVTable;

namespace detail {

class RequestStateBase {
 public:
  RequestStateBase(bool all, Waker waiter) : waiter_(std::move(waiter)), all_(all) {}
  RequestStateBase(const RequestStateBase&) = delete;
  RequestStateBase& operator=(const RequestStateBase&) = delete;
  virtual ~RequestStateBase() = default;

  /// One more mailbox holds the request. Called before the push, so an answer can never
  /// outrun its own delivery count.
  void add_delivery() {
    std::lock_guard lock(mu_);
    ++outstanding_;
  }
  /// The push after `add_delivery` failed: that mailbox owes nothing.
  void cancel_delivery() { finish_one(std::nullopt); }
  /// A recipient will never answer.
  void fail(RequestError error) { finish_one(std::move(error)); }
  /// The requester finished delivering; from now on an empty count means "all answered".
  void release_sender() { finish_one(std::nullopt); }
  /// Settles the request now with `error` (a deadline passed, the caller stopped), whatever is
  /// still outstanding; answers arriving later are dropped. No-op if already done.
  void expire(RequestError error) {
    settle(
        [&] {
          record_error_locked(std::move(error));
          return true;
        },
        false, TraceId{});
  }

  /// Acquire pairs with the release in `settle`, so the answer written before is visible.
  [[nodiscard]] bool done() const { return done_.load(std::memory_order_acquire); }
  [[nodiscard]] bool is_all() const { return all_; }
  /// Trace id of the answer that completed the request (responses carry their request's trace).
  /// Valid once `done()`; nothing writes it afterwards.
  [[nodiscard]] TraceId response_trace_id() const { return response_trace_; }

  /// Set before sending when the requester's group dumps: links the request's dumps with its
  /// responses' (`c` in dump files). 0 and null otherwise.
  void mark_dumped(std::uint64_t correlation_id, const MessageVTable* request) {
    correlation_id_ = correlation_id;
    request_vtable_ = request;
  }
  [[nodiscard]] std::uint64_t correlation_id() const { return correlation_id_; }
  [[nodiscard]] const MessageVTable* request_vtable() const { return request_vtable_; }

  /// Set before sending when the requester's group measures: the request's type and when it was
  /// sent (a TelemetryStamp), so its answer time is counted when the answer arrives. Null and 0
  /// otherwise.
  void mark_measured(const MessageVTable* request, std::uint64_t sent_at) {
    measured_ = request;
    measured_since_ = sent_at;
  }
  [[nodiscard]] const MessageVTable* measured() const { return measured_; }
  [[nodiscard]] std::uint64_t measured_since() const { return measured_since_; }

 protected:
  // Every path that changes the answer state funnels through here: it updates the count and, if
  // the request just completed, wakes the requester outside the lock.
  template <class Record>
  void settle(Record&& record, bool counts_as_answer, TraceId trace) {
    Waker to_wake;
    bool completed = false;
    {
      std::lock_guard lock(mu_);
      if (done_.load(std::memory_order_relaxed)) return;
      bool complete_now = record();
      if (counts_as_answer) --outstanding_;
      if (trace.is_valid()) response_trace_ = trace;
      if (complete_now || outstanding_ == 0) {
        done_.store(true, std::memory_order_release);
        to_wake = std::move(waiter_);
        completed = true;
      }
    }
    if (completed) on_complete(std::move(to_wake));
  }
  virtual void record_error_locked(RequestError error) = 0;
  /// Runs once, outside the lock, on the thread that completed the request. A local requester is
  /// woken; a remote one (the network's state) sends the answers back instead.
  virtual void on_complete(Waker waiter) {
    if (waiter) waiter.wake();
  }

 private:
  void finish_one(std::optional<RequestError> error) {
    settle(
        [&] {
          if (error) record_error_locked(std::move(*error));
          return false;
        },
        true, TraceId{});
  }

  SpinLock mu_;
  int outstanding_ = 1;  // the requester's own hold until `release_sender`
  std::atomic<bool> done_{false};
  TraceId response_trace_;
  std::uint64_t correlation_id_ = 0;
  const MessageVTable* request_vtable_ = nullptr;
  const MessageVTable* measured_ = nullptr;
  std::uint64_t measured_since_ = 0;
  Waker waiter_;
  bool all_;
};

template <class T>
class RequestState : public RequestStateBase {
 public:
  using RequestStateBase::RequestStateBase;

  void respond(T value, TraceId trace) {
    this->settle(
        [&] {
          if (is_all()) {
            all_results_.emplace_back(std::move(value));
            return false;
          }
          any_result_.emplace(std::move(value));
          return true;  // the first Ok settles an "any" request
        },
        true, trace);
  }

  /// The answer of an "any" request (call once `done()`).
  Result<T, RequestError> take_any() {
    if (any_result_) return std::move(*any_result_);
    if (best_error_) return Err{std::move(*best_error_)};
    return Err{RequestError{RequestError::Failed, std::string(kReachedNoOne)}};
  }
  /// Every answer of an "all" request (call once `done()`).
  std::vector<Result<T, RequestError>> take_all() { return std::move(all_results_); }

 private:
  void record_error_locked(RequestError error) final {
    if (is_all()) {
      all_results_.emplace_back(Err{std::move(error)});
      return;
    }
    // The best error wins: Ignored (someone handled it) over Failed, and a Failed that says why
    // over one that does not.
    // A TimedOut comes from `expire`, which settles the request: it is the answer.
    const bool better =
        !best_error_ || error == RequestError::TimedOut ||
        (*best_error_ != RequestError::Ignored && (error == RequestError::Ignored || best_error_->reason().empty()));
    if (better) best_error_ = std::move(error);
  }

  std::optional<Result<T, RequestError>> any_result_;
  std::optional<RequestError> best_error_;
  std::vector<Result<T, RequestError>> all_results_;
};

/// A recipient gives up its answer to `state`: `error`, unless the actor running on this thread
/// is unwinding an exception (the handler threw): then its cell keeps the state until it knows
/// the outcome — Failed with the exception's text if the actor fails, `error` if it survives
/// (it caught the exception itself). Defined in actor_cell.cpp.
void abandon_answer(std::shared_ptr<RequestStateBase> state, RequestError error) noexcept;

}  // namespace detail

}  // namespace elfin
