// CallState: the answer slot of one elfin::Caller request — a RequestState that, once settled,
// leaves the caller's book of outstanding calls and hands its answer to a callback.
//
// The book (CallRegistry, src/caller.cpp) orders the outstanding calls by deadline, so the
// caller's timer thread expires them (TimedOut) and `stop` answers all of them. A call leaves the
// book exactly once: on completion (`delist_call`), or taken by the timer or `stop`, which then
// settle it; whoever settles first wins (RequestStateBase::settle), the others are no-ops.
//
// Thread safety: as RequestState; `book()` is guarded by the registry's mutex.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include <elfin/detail/request_state.hpp>

namespace elfin::detail {

class CallRegistry;

struct CallBook;

/// One outstanding call: its state (kept alive while listed) and the book inside it.
struct CallEntry {
  std::shared_ptr<RequestStateBase> state;
  CallBook* book = nullptr;
};
using CallTimeline = std::multimap<std::chrono::steady_clock::time_point, CallEntry>;

/// Where a call sits in its caller's book; guarded by the registry's mutex.
struct CallBook {
  std::weak_ptr<CallRegistry> registry;
  CallTimeline::iterator at{};
  bool listed = false;
};

/// Takes the call out of the book if it is still there (src/caller.cpp).
void delist_call(CallBook& book) noexcept;

template <class T>
class CallState final : public RequestState<T> {
 public:
  explicit CallState(std::function<void(Result<T, RequestError>)> on_answer)
      : RequestState<T>(false, Waker{}), on_answer_(std::move(on_answer)) {}

  [[nodiscard]] CallBook& book() { return book_; }

 private:
  void on_complete(Waker /*unused: the callback is the waiter*/) noexcept override {
    delist_call(book_);
    if (auto on_answer = std::move(on_answer_)) on_answer(this->take_any());
  }

  CallBook book_;
  std::function<void(Result<T, RequestError>)> on_answer_;
};

}  // namespace elfin::detail
