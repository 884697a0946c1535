// Context: an actor's handle on the world — its identity, its config, its mailbox, and every way
// to talk to other actors.
//
//   send(m)            co_await: waits while a recipient's mailbox is full   → SendResult<M>
//   try_send(m)        never waits: Full / Closed / NoRoute                 → SendResult<M>
//                      a failed send gives the message back: std::move(r).error().into_message()
//   unbounded_send(m)  ignores capacity (use sparingly: it can grow mailboxes without bound)
//   *_to(addr, m)      to an address: a group's (its router decides) or an actor's (no routing)
//   request(r)         co_await: the first Ok answer, else Failed / Ignored  → Result<R::Response, RequestError>
//   request(r).all()   co_await: every recipient's answer                   → std::vector<Result<...>>
//   request(r).timeout(d)  the same, TimedOut if no answer came within d (before .all() too)
//   respond(token, v)  answers a request once; a dropped token answers Ignored
//   recv()             co_await: the next envelope, or nullopt once the mailbox is closed and empty
//   attach(source)     an Interval, Delay, Signal or Stream whose messages `recv` returns too
//   blocking(fn)       co_await: fn() run on a thread of the system's blocking pool → its result
//   set_restart_policy(p)  overrides the group's restart policy for this lifecycle (nullopt: undo)
//   start_info()       whether this actor is a restart, and which attempt
//
// Every envelope sent carries the actor's current trace id; `recv` makes the received envelope's
// trace id current. `config()` returns a reference that stays valid until the next `recv`.
//
// Thread safety: a Context belongs to its actor; copies are cheap and must stay inside it.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <elfin/actor_start_info.hpp>
#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/awaitables.hpp>
#include <elfin/detail/blocking.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/detail/source.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/request.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/result.hpp>
#include <elfin/singleton.hpp>
#include <elfin/telemetry.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

template <Request R>
class RequestBuilder;

namespace detail {
struct ActorCellAccess {
  template <class Ctx>
  static ActorCell* cell(const Ctx& ctx) {
    return ctx.cell_;
  }
  /// The context an actor's exec receives (only the runtime makes one).
  template <class Ctx, class Cell>
  static Ctx make(Cell* cell) {
    return Ctx{cell};
  }
};

/// The clock of the system `group` runs in (see Context::now).
[[nodiscard]] std::chrono::steady_clock::time_point system_now(const GroupRuntime& group);
}  // namespace detail

template <class Config = NoConfig, class Key = Singleton>
class Context {
 public:
  using config_type = Config;
  using key_type = Key;

  [[nodiscard]] Addr addr() const { return cell_->addr(); }
  [[nodiscard]] const std::string& group() const { return cell_->group().name(); }
  [[nodiscard]] Addr group_addr() const { return cell_->group().addr(); }
  [[nodiscard]] const Key& key() const { return cell_->key(); }
  [[nodiscard]] const Config& config() const { return *static_cast<const Config*>(cell_->config().get()); }
  [[nodiscard]] TraceId trace_id() const { return cell_->trace_id(); }
  void set_trace_id(TraceId id) { cell_->set_trace_id(id); }

  // --- sending --------------------------------------------------------------------------------
  template <Message M>
  [[nodiscard]] detail::SendAwaitable<M> send(M message) {
    return {cell_, routed(std::move(message), detail::SendMode::Bounded)};
  }
  template <Message M>
  SendResult<M> try_send(M message) {
    return now<M>(routed(std::move(message), detail::SendMode::Try));
  }
  template <Message M>
  SendResult<M> unbounded_send(M message) {
    return now<M>(routed(std::move(message), detail::SendMode::Unbounded));
  }
  template <Message M>
  [[nodiscard]] detail::SendAwaitable<M> send_to(Addr to, M message) {
    return {cell_, direct(to, std::move(message), detail::SendMode::Bounded)};
  }
  template <Message M>
  SendResult<M> try_send_to(Addr to, M message) {
    return now<M>(direct(to, std::move(message), detail::SendMode::Try));
  }
  template <Message M>
  SendResult<M> unbounded_send_to(Addr to, M message) {
    return now<M>(direct(to, std::move(message), detail::SendMode::Unbounded));
  }

  // --- requests -------------------------------------------------------------------------------
  template <Request R>
  [[nodiscard]] RequestBuilder<R> request(R request) {
    return RequestBuilder<R>{cell_, std::move(request), std::nullopt};
  }
  template <Request R>
  [[nodiscard]] RequestBuilder<R> request_to(Addr to, R request) {
    return RequestBuilder<R>{cell_, std::move(request), to};
  }
  template <Request R>
  void respond(ResponseToken<R> token, typename R::Response value) {
    std::move(token).respond(std::move(value));
  }

  // --- receiving ------------------------------------------------------------------------------
  [[nodiscard]] detail::RecvAwaitable recv() { return detail::RecvAwaitable{cell_}; }
  /// The next envelope if one is queued; never waits.
  Result<Envelope, TryRecvError> try_recv() {
    Envelope envelope;
    switch (cell_->take_next(envelope)) {
      case detail::PopResult::Item:
        return envelope;
      case detail::PopResult::Closed:
        return Err{TryRecvError::Closed};
      case detail::PopResult::Empty:
        break;
    }
    return Err{TryRecvError::Empty};
  }
  /// Attaches a source (Interval, Delay, Signal, Stream): `recv` returns its messages along with
  /// the mailbox's, taking turns. Returns the source's handle; the source lives until it
  /// finishes, is terminated, or the actor ends.
  template <detail::Source S>
  S attach(S source) {
    return detail::attach_source(std::move(source), *cell_);
  }
  /// Runs `fn()` on a thread of the system's blocking pool, never on a worker, for work that
  /// blocks (a file write and its fsync, a blocking library call): other actors keep running
  /// meanwhile. The awaiting coroutine resumes on the actor's thread with fn's result, or fn's
  /// exception rethrown. Awaited in the actor's own loop, the actor waits for it; awaited in a
  /// Stream (`Stream::once(task)`), the actor goes on handling messages and receives the stream's
  /// item when fn returns. `fn` must own what it uses (capture by value): if the actor ends
  /// meanwhile, fn still runs to its end and its result is dropped. `fn` and its captures are
  /// destroyed on the pool's thread. Under virtual time `fn` runs inline, on the actor's thread.
  template <class F>
    requires std::invocable<F&>
  [[nodiscard]] detail::BlockingAwaitable<F> blocking(F fn) {
    return {cell_, std::move(fn)};
  }
  /// Closes the mailbox: what is queued is still received, then `recv` ends. False if already closed.
  bool close() { return cell_->close_mailbox(); }
  /// Lets other actors run; long computations call this now and then (cooperative scheduling).
  [[nodiscard]] detail::YieldAwaitable yield_now() { return detail::YieldAwaitable{cell_}; }
  /// The system's clock (System::now): the steady clock, or virtual time under
  /// StartOptions::virtual_time. Deadlines an actor computes from it pass with the timers and
  /// delays that wake it, so the actor behaves the same in a simulated cluster.
  [[nodiscard]] std::chrono::steady_clock::time_point now() const { return detail::system_now(cell_->group()); }

  /// Sends a received envelope on, as it is, to `to` (a group: its router decides; an actor),
  /// never waiting: its sender, trace id and, for a request, the duty to answer go with it, so its
  /// new recipient answers the original requester. On failure `envelope` holds it again, duty
  /// included, for another try. The envelope is re-addressed, not copied: a message multicast to
  /// several recipients is not forwarded by one of them while the others may still be sending it.
  Result<void, SendErrorKind> try_forward_to(Addr to, Envelope& envelope) {
    return detail::forward_envelope(cell_->group().system(), to, envelope);
  }

  // --- lifecycle ------------------------------------------------------------------------------
  void set_status(ActorStatus status) { cell_->set_status(std::move(status)); }
  [[nodiscard]] const ActorStatus& status() const { return cell_->status(); }
  /// Starts the termination of the whole system (as SIGTERM would).
  void terminate_system(std::string reason) { detail::terminate_system(cell_->group().system(), std::move(reason)); }
  /// Ends the actor at `actor` (of this node) without its cooperation: the next time it is
  /// suspended — waiting in `recv`, on a send, a request or a yield, or not started yet — its
  /// coroutine frame is destroyed instead of resumed (its destructors run, its pending requests
  /// and timers are dropped), what its mailbox holds is dropped (queued requests fail), and it ends
  /// Terminated ("killed: <reason>"), never restarted. No Terminate is delivered. An actor busy in
  /// a synchronous loop is ended only once it suspends. A message sent to it after the kill may
  /// still be queued, then dropped. False if there is no such actor (it finished, the address is
  /// remote or a group's) or a kill was asked already. Returns at once; watch the actor's status
  /// (or whatever its frame's destructors do) to know it ended.
  bool kill(Addr actor, std::string reason = "killed") {
    return detail::kill_actor(cell_->group().system(), actor, std::move(reason));
  }
  /// Overrides the group's restart policy (config, else blueprint) for this lifecycle only; a
  /// restarted actor starts with the group's again. `std::nullopt` restores the group's now.
  void set_restart_policy(std::optional<RestartPolicy> policy) { cell_->set_restart_override(policy); }
  /// Why this lifecycle began: a first start for the key, or a restart (and which attempt).
  [[nodiscard]] const ActorStartInfo& start_info() const { return cell_->start_info(); }
  /// Overrides this actor's mailbox capacity (the group's config sets the default).
  void set_mailbox_capacity(std::size_t capacity) { cell_->set_mailbox_capacity(capacity); }

 private:
  template <Message M>
  Envelope outgoing(M message) {
    Envelope envelope = Envelope::make(std::move(message), cell_->addr(), cell_->trace_id());
    detail::observe_sent(*cell_, envelope);
    return envelope;
  }
  template <Message M>
  detail::SendOp routed(M message, detail::SendMode mode) {
    return {cell_->group(), outgoing(std::move(message)), mode};
  }
  template <Message M>
  detail::SendOp direct(Addr to, M message, detail::SendMode mode) {
    return {cell_->group().system(), to, outgoing(std::move(message)), mode};
  }
  template <Message M>
  SendResult<M> now(detail::SendOp op) {
    std::ignore = op.run(nullptr);  // Try/Unbounded never wait
    return std::move(op).template typed_result<M>();
  }

  friend struct detail::ActorCellAccess;
  explicit Context(detail::KeyedCell<Key>* cell) : cell_(cell) {}

  detail::KeyedCell<Key>* cell_;
};

namespace dumping {
class DumpStorage;
/// The storage of the system `group` runs in; null when the topology has no `system.dumpers`.
[[nodiscard]] DumpStorage* storage_of(const elfin::detail::GroupRuntime& group);
/// The dump storage of the system `ctx`'s actor runs in (the dumper drains it); null without
/// `system.dumpers`.
template <class C, class K>
[[nodiscard]] DumpStorage* storage_of(const Context<C, K>& ctx) {
  return storage_of(detail::ActorCellAccess::cell(ctx)->group());
}
}  // namespace dumping

namespace telemetry {
/// A function any thread may call, while the system runs, to scrape the system of `ctx`'s actor
/// (the telemeter hands it to its HTTP server).
template <class C, class K>
[[nodiscard]] std::function<std::vector<MetricSample>()> scraper(const Context<C, K>& ctx) {
  const detail::GroupRuntime* group = &detail::ActorCellAccess::cell(ctx)->group();
  return [group] { return scrape(*group); };
}
/// Everything the system of `ctx`'s actor measures now.
template <class C, class K>
[[nodiscard]] std::vector<MetricSample> scrape(const Context<C, K>& ctx) {
  return scrape(detail::ActorCellAccess::cell(ctx)->group());
}
}  // namespace telemetry

/// `co_await ctx.request(r)` for the first answer, `co_await ctx.request(r).all()` for all;
/// `.timeout(d)` before either bounds the wait.
template <Request R>
class [[nodiscard]] RequestBuilder {
 public:
  using Response = typename R::Response;

  RequestBuilder(detail::ActorCell* self, R request, std::optional<Addr> to)
      : self_(self), request_(std::move(request)), to_(to) {}

  auto operator co_await() && { return std::move(*this).template make<false>(); }
  [[nodiscard]] auto all() && { return std::move(*this).template make<true>(); }

  /// Waits at most `limit` from now, waiting for room in a full mailbox included: then the answer
  /// is RequestError::TimedOut (for `.all()`, the answers so far and one TimedOut). A recipient
  /// may still handle a request that timed out; its late answer is dropped. Follows virtual time
  /// in tests that use it.
  [[nodiscard]] RequestBuilder timeout(std::chrono::nanoseconds limit) && {
    timeout_ = limit;
    return std::move(*this);
  }

 private:
  template <bool All>
  detail::RequestAwaitable<Response, All> make() && {
    auto state = std::make_shared<detail::RequestState<Response>>(All, detail::Waker{self_->shared_from_this()});
    Envelope envelope = Envelope::make(std::move(request_), self_->addr(), self_->trace_id(), MessageKind::Request);
    detail::EnvelopeAccess::block(envelope)->request = state;
    detail::observe_sent(*self_, envelope);
    auto deadline =
        timeout_ ? detail::RequestDeadline{self_->group().system(), state, *timeout_} : detail::RequestDeadline{};
    auto op = to_ ? detail::SendOp{self_->group().system(), *to_, std::move(envelope), detail::SendMode::Bounded}
                  : detail::SendOp{self_->group(), std::move(envelope), detail::SendMode::Bounded};
    return {self_, std::move(op), std::move(state), std::move(deadline)};
  }

  detail::ActorCell* self_;
  R request_;
  std::optional<Addr> to_;
  std::optional<std::chrono::nanoseconds> timeout_;
};

}  // namespace elfin
