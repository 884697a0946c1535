// Requests and responses: `co_await ctx.request(r)` and `ctx.respond(token, value)`.
//
// A request carries a shared answer slot (RequestState). Each mailbox the request reaches owes
// one answer; the recipient discharges it by responding through its ResponseToken, or by dropping
// the token (Ignored), or by finishing without handling it (Failed). The requester resumes when
// the answer it waits for is known:
//   - "any" (`co_await ctx.request(r)`): the first Ok, else the best error (Ignored > Failed);
//   - "all" (`co_await ctx.request(r).all()`): every recipient's answer, in arrival order.
// A request that reached no mailbox at all is Failed at once.
//
// Thread safety: RequestState is shared between the requester and the responders and locks
// internally. A ResponseToken is move-only and used by the actor that received the request.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>  // std::lock_guard
#include <optional>
#include <utility>
#include <vector>

#include <elfin/detail/observation.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/result.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

/// The right to answer one request, once. Dropping it unanswered answers `Ignored`.
template <Request R>
class [[nodiscard]] ResponseToken {
 public:
  using Response = typename R::Response;

  ResponseToken() = default;
  ResponseToken(std::shared_ptr<detail::RequestState<Response>> state, TraceId trace_id)
      : state_(std::move(state)), trace_id_(trace_id) {}
  ResponseToken(ResponseToken&&) noexcept = default;
  ResponseToken& operator=(ResponseToken&& other) noexcept {
    if (this != &other) {
      drop();
      state_ = std::move(other.state_);
      trace_id_ = other.trace_id_;
    }
    return *this;
  }
  ~ResponseToken() { drop(); }

  /// A token of a request sent with plain `send`: nobody waits, answers are discarded.
  [[nodiscard]] bool is_forgotten() const { return !state_; }

  /// Answers the request. Prefer `ctx.respond(std::move(token), value)`.
  void respond(Response value) && {
    if (auto state = std::move(state_)) {
      detail::observe_response_sent(vtable_of<R>(), value, trace_id_, state->correlation_id());
      state->respond(std::move(value), trace_id_);
    }
  }

 private:
  void drop() {
    if (auto state = std::move(state_)) detail::abandon_answer(std::move(state), RequestError::Ignored);
  }
  std::shared_ptr<detail::RequestState<Response>> state_;
  TraceId trace_id_;
};

template <Request R>
ResponseToken<R> Envelope::take_token() {
  if (!block_->request || !obligated()) return {};
  discharge();  // from now on the token carries the obligation
  return ResponseToken<R>{std::static_pointer_cast<detail::RequestState<typename R::Response>>(block_->request),
                          block_->trace_id};
}

}  // namespace elfin
