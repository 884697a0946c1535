// RequestDeadline: the timer behind `co_await ctx.request(r).timeout(d)`.
//
// When the time is up it settles the request with RequestError::TimedOut (answers arriving later
// are dropped, see RequestStateBase::expire). It runs on the system's timer service, so it follows
// virtual time in tests that use it. It holds the request only weakly: a request answered in time
// costs one timer that is cancelled when the requester resumes (or gives up waiting).
//
// Thread safety: owned by the requesting actor's awaitable; the timer thread only expires the
// answer slot, which locks itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

namespace elfin::detail {

class SystemCore;
class RequestStateBase;

class RequestDeadline {
 public:
  RequestDeadline() = default;
  RequestDeadline(SystemCore& system, const std::shared_ptr<RequestStateBase>& state, std::chrono::nanoseconds limit);
  RequestDeadline(RequestDeadline&& other) noexcept
      : system_(std::exchange(other.system_, nullptr)), timer_(std::exchange(other.timer_, 0)) {}
  RequestDeadline& operator=(RequestDeadline&&) = delete;
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;
  ~RequestDeadline() { cancel(); }

  /// The answer is in (or nobody waits for it any more): the timer never fires.
  void cancel() noexcept {
    if (timer_ != 0) cancel_timer();
  }

 private:
  void cancel_timer() noexcept;

  SystemCore* system_ = nullptr;
  std::uint64_t timer_ = 0;
};

}  // namespace elfin::detail
