// Caller: how a plain thread (not an actor) sends into a running system and makes requests, many
// at once, each answered through a future or a callback by its deadline at the latest.
//
//   topology.local(elfin::Caller::kGroup).mount(elfin::Caller::blueprint());
//   auto system = elfin::System::start(std::move(topology));
//   auto caller = elfin::Caller::attach(*system);                      // Result<Caller, std::string>
//   auto counters = system->group_addr("counters");
//   std::ignore = caller->send_to(counters, Increment{});
//   auto sum = caller->request_to(counters, Summarize{}, 2s).get();   // Result<uint64_t, RequestError>
//   caller->request_to(counters, Summarize{}, 2s, [](elfin::Result<std::uint64_t, elfin::RequestError> r) {...});
//   caller->stop();   // every request still waiting is answered Stopped; so are later calls
//
// A caller is an actor of the external group `system.callers` (its address is the sender of what
// it sends) with no coroutine: answers come back through the requests' answer slots, on whichever
// thread settles them (a worker, the network's I/O thread, the caller's timer thread, or the
// calling thread when the request reached no one). A callback must be short and must not throw.
//
// Every request is answered exactly once: Ok, or a RequestError — Failed (reached no one, the
// recipient finished or failed, a peer went away), Ignored, TimedOut (the deadline passed; the
// request may still have been handled) or Stopped (the caller stopped first). One timer thread per caller expires
// deadlines. A send or request waits while the first mailbox is full (back-pressure, as an actor's
// `send`), up to its timeout. To another node, with the network battery, the calling thread
// encodes and writes the message itself (no forwarder; see book/src/light-node.md) and waits
// likewise while the caller's flow to that node has no credit. Messages sent to the caller's own
// address are refused (Closed): it receives only responses.
//
// Thread safety: every member from any thread; copies share one caller. Drop every copy before
// the System is destroyed (elfin::network::LightNode does this in order).
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <elfin/addr.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/detail/call_state.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>
#include <elfin/system.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

template <class T>
using Answer = Result<T, RequestError>;

class Caller {
 public:
  using Clock = std::chrono::steady_clock;

  /// The group a system mounts for its callers: `topology.local(Caller::kGroup).mount(Caller::blueprint())`.
  static constexpr std::string_view kGroup = "system.callers";
  [[nodiscard]] static Blueprint blueprint();
  /// A new caller (own address) in `system`, whose topology mounted `blueprint()` as `kGroup`.
  [[nodiscard]] static Result<Caller, std::string> attach(System& system);

  Caller(const Caller&) = default;
  Caller(Caller&&) noexcept = default;
  Caller& operator=(const Caller&) = default;
  Caller& operator=(Caller&&) noexcept = default;
  ~Caller();

  /// Sends to a group (its router picks) or an actor address, waiting up to `timeout` while the
  /// mailbox is full (then Full, the message given back).
  template <Message M>
  SendResult<M> send_to(Addr to, M message, std::chrono::milliseconds timeout = std::chrono::seconds{5}) {
    detail::SendOp op = make_op(to, make(std::move(message), MessageKind::Regular), detail::SendMode::Bounded);
    if (!run_op(op, Clock::now() + timeout)) {
      return Err{SendError<M>{SendErrorKind::Full, std::move(op).take_envelope().template take_message<M>()}};
    }
    return std::move(op).template typed_result<M>();
  }
  /// Never waits: a full mailbox gives Full at once.
  template <Message M>
  SendResult<M> try_send_to(Addr to, M message) {
    detail::SendOp op = make_op(to, make(std::move(message), MessageKind::Regular), detail::SendMode::Try);
    std::ignore = op.run(nullptr);
    return std::move(op).template typed_result<M>();
  }

  /// Requests from `to`; `on_answer(Answer<R::Response>)` runs exactly once, by `timeout` from now
  /// at the latest (TimedOut). Returns once the request is in the first mailbox (or failed).
  template <Request R, std::invocable<Answer<typename R::Response>> F>
  void request_to(Addr to, R request, std::chrono::milliseconds timeout, F on_answer) {
    using T = typename R::Response;
    const auto deadline = Clock::now() + timeout;
    auto state = std::make_shared<detail::CallState<T>>(std::function<void(Answer<T>)>(std::move(on_answer)));
    const std::size_t outstanding = enlist(state, state->book(), deadline);
    if (outstanding == 0) {
      state->expire(RequestError{RequestError::Stopped, std::string(kStopped)});
      return;
    }
    detail::SendOp op =
        make_op(to, make(std::move(request), MessageKind::Request, state), detail::SendMode::Bounded, outstanding == 1);
    if (!run_op(op, deadline)) {
      state->expire(RequestError{RequestError::TimedOut, "the recipient's mailbox stayed full"});
    }
    state->release_sender();
  }
  /// The same, answered through a future (`get()` never blocks past the deadline).
  template <Request R>
  [[nodiscard]] std::future<Answer<typename R::Response>> request_to(Addr to, R request,
                                                                     std::chrono::milliseconds timeout) {
    using T = typename R::Response;
    auto promise = std::make_shared<std::promise<Answer<T>>>();
    auto future = promise->get_future();
    request_to(to, std::move(request), timeout, [promise](Answer<T> answer) { promise->set_value(std::move(answer)); });
    return future;
  }

  /// Answers every request still waiting (Stopped, "the caller stopped: <reason>") and makes later
  /// calls fail at once (Stopped). Idempotent; not from inside a callback.
  void stop(const std::string& reason = "stop() called");
  /// Requests sent and not yet answered.
  [[nodiscard]] std::size_t outstanding() const;
  [[nodiscard]] Addr addr() const;

  static constexpr std::string_view kStopped = "the caller is stopped";

  struct Shared;

 private:
  explicit Caller(std::shared_ptr<Shared> shared);

  template <Message M>
  Envelope make(M message, MessageKind kind, std::shared_ptr<detail::RequestStateBase> request = nullptr) const {
    Envelope envelope = Envelope::make(std::move(message), addr(), TraceId::generate(), kind);
    detail::EnvelopeAccess::block(envelope)->request = std::move(request);
    observe(envelope);
    return envelope;
  }
  /// Dumps and telemetry see what the caller sends, as an actor's sends.
  void observe(const Envelope& envelope) const;
  /// `alone`: no other request of this caller waits for its answer (see SendOp::carry_directly).
  [[nodiscard]] detail::SendOp make_op(Addr to, Envelope envelope, detail::SendMode mode, bool alone = true) const;
  /// Runs `op`, waiting while a mailbox is full; false if `deadline` passed first.
  [[nodiscard]] bool run_op(detail::SendOp& op, Clock::time_point deadline) const;
  /// The caller's outstanding requests with this one; 0 if the caller is stopped (not enlisted).
  [[nodiscard]] std::size_t enlist(std::shared_ptr<detail::RequestStateBase> state, detail::CallBook& book,
                                   Clock::time_point deadline) const;

  std::shared_ptr<Shared> shared_;
};

}  // namespace elfin
