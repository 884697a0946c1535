// The test proxy: drives one actor group from a Catch2 test, as elfo's `test::proxy` does.
//
//   auto proxy = elfin::testing::proxy(counter::blueprint(), "step = 20");
//   proxy.send(Increment{});
//   CHECK(proxy.request(Summarize{}) == 20);   // blocks up to a deadline, never hangs
//   auto reply = proxy.recv();                  // what the group sent out
//
// The proxy starts a real system with two groups: `subject` (the blueprint under test, with the
// given config as its section) and `system.testers`, routed to each other for every message.
// The proxy is an actor of `system.testers` driven by the test's thread: its calls block (with a
// deadline) while the runtime runs on its own workers. A sub-proxy is another such actor with
// its own address, for tests that need several correspondents.
//
// With `ProxyOptions::virtual_time` the system's clock stands still until `proxy.advance(30s)`
// moves it: every timer due in those 30 s fires, in order, with the system settling between them,
// so intervals, delays and restart backoffs are tested in milliseconds of wall time. Deadlines of
// the proxy's own calls stay in real time.
//
// Every call that can time out throws `ProxyError`, so a broken expectation fails the test with a
// message instead of hanging it.
//
// Thread safety: a Proxy is used by one test thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include <elfin/blueprint.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/system.hpp>
#include <elfin/topology.hpp>

namespace elfin::testing {

class ProxyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProxyOptions {
  /// How long `recv`, `request` and a blocked `send` wait before throwing.
  std::chrono::milliseconds timeout{5000};
  unsigned workers = 2;
  std::uint16_t node_no = 0;
  /// Run the system under virtual time (see `Proxy::advance`).
  bool virtual_time = false;
};

class Proxy {
 public:
  Proxy(Proxy&&) noexcept;
  Proxy& operator=(Proxy&&) noexcept;
  ~Proxy();

  /// Sends to the subject group (routed), waiting while its mailbox is full.
  template <Message M>
  void send(M message) {
    must(blocking_send(routed_op(make(std::move(message)), detail::SendMode::Bounded)), "send", M::elfin_name);
  }
  template <Message M>
  void send_to(Addr to, M message) {
    must(blocking_send(direct_op(to, make(std::move(message)), detail::SendMode::Bounded)), "send_to", M::elfin_name);
  }
  /// A failed send gives the message back, as `ctx.try_send` does.
  template <Message M>
  SendResult<M> try_send(M message) {
    return given_back<M>(routed_op(make(std::move(message)), detail::SendMode::Try));
  }
  template <Message M>
  SendResult<M> try_send_to(Addr to, M message) {
    return given_back<M>(direct_op(to, make(std::move(message)), detail::SendMode::Try));
  }
  template <Message M>
  SendResult<M> unbounded_send(M message) {
    return given_back<M>(routed_op(make(std::move(message)), detail::SendMode::Unbounded));
  }

  /// Requests from the subject and returns the answer; throws ProxyError on Failed/Ignored.
  template <Request R>
  typename R::Response request(R request) {
    auto result = request_fallible(std::move(request));
    if (!result) throw ProxyError(fmt::format("proxy.request({}): {}", R::elfin_name, to_string(result.error())));
    return std::move(result).value();
  }
  template <Request R>
  Result<typename R::Response, RequestError> request_fallible(R request, std::optional<Addr> to = std::nullopt) {
    return take_any(*issue<R, false>(std::move(request), to));
  }
  template <Request R>
  std::vector<Result<typename R::Response, RequestError>> request_all(R request,
                                                                      std::optional<Addr> to = std::nullopt) {
    return take_all(*issue<R, true>(std::move(request), to));
  }

  /// The next envelope sent to this proxy; throws ProxyError after the timeout.
  Envelope recv();
  /// The next envelope as an `M`; throws ProxyError if it is something else.
  template <Message M>
  M recv_as() {
    Envelope envelope = recv();
    const M* message = envelope.get<M>();
    if (message == nullptr) {
      throw ProxyError(fmt::format("proxy.recv_as: expected {}.{}, got {}.{}", M::elfin_protocol, M::elfin_name,
                                   envelope.protocol(), envelope.name()));
    }
    return *message;
  }
  /// An envelope if one is already queued.
  std::optional<Envelope> try_recv();
  /// Waits until every actor of the subject has handled everything sent to it so far.
  void sync();
  /// Virtual time: moves the clock forward by `by` (see `System::advance_time`); what the subject
  /// sent meanwhile is then queued for `recv`. Throws ProxyError in real time or if the system
  /// does not settle within the proxy's timeout.
  void advance(std::chrono::nanoseconds by);
  /// Another proxy actor (own address, own mailbox) in the same system.
  [[nodiscard]] Proxy subproxy();

  [[nodiscard]] Addr addr() const;
  [[nodiscard]] Addr subject_addr() const;
  [[nodiscard]] System& system() const;
  [[nodiscard]] TraceId trace_id() const;
  /// The trace id stamped on what the proxy sends next (`recv` also sets it, as in an actor).
  void set_trace_id(TraceId id);
  void set_timeout(std::chrono::milliseconds timeout);

  struct Shared;

 private:
  friend Proxy proxy(Blueprint, std::string, ProxyOptions);
  friend Proxy proxy(Topology, std::string_view, StartOptions, ProxyOptions);
  explicit Proxy(std::shared_ptr<Shared> shared);

  /// What the proxy sends, observed (dumps, telemetry) like an actor's.
  template <Message M>
  Envelope make(M message, MessageKind kind = MessageKind::Regular,
                std::shared_ptr<detail::RequestStateBase> request = nullptr) const {
    Envelope envelope = Envelope::make(std::move(message), addr(), trace_id(), kind);
    detail::EnvelopeAccess::block(envelope)->request = std::move(request);
    detail::observe_sent(*cell_, envelope);
    return envelope;
  }
  detail::SendOp routed_op(Envelope envelope, detail::SendMode mode) const;
  detail::SendOp direct_op(Addr to, Envelope envelope, detail::SendMode mode) const;
  Result<void, SendErrorKind> blocking_send(detail::SendOp& op);
  Result<void, SendErrorKind> blocking_send(detail::SendOp&& op) { return blocking_send(op); }
  template <Message M>
  SendResult<M> given_back(detail::SendOp op) {
    std::ignore = blocking_send(op);
    return std::move(op).template typed_result<M>();
  }
  /// Waits for a condition the runtime signals through this proxy's cell; throws on timeout.
  template <class Done>
  void wait(Done done, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (!done()) {
      if (!wait_signal(deadline) && !done()) {
        throw ProxyError(fmt::format("proxy.{}: nothing happened within {} ms", what, timeout_.count()));
      }
    }
  }
  bool wait_signal(std::chrono::steady_clock::time_point deadline);
  detail::Waker waker() const;
  static void must(const Result<void, SendErrorKind>& result, const char* call, std::string_view name);

  template <Request R, bool All>
  std::shared_ptr<detail::RequestState<typename R::Response>> issue(R request, std::optional<Addr> to,
                                                                    const char* what = "request") {
    auto state = std::make_shared<detail::RequestState<typename R::Response>>(All, waker());
    Envelope envelope = make(std::move(request), MessageKind::Request, state);
    detail::SendOp op = to ? direct_op(*to, std::move(envelope), detail::SendMode::Bounded)
                           : routed_op(std::move(envelope), detail::SendMode::Bounded);
    std::ignore = blocking_send(std::move(op));
    state->release_sender();
    wait([&] { return state->done(); }, what);
    return state;
  }

  /// The answer(s) a request got, observed (dumps, telemetry) as delivered to the proxy, like an
  /// actor's.
  template <class T>
  Result<T, RequestError> take_any(detail::RequestState<T>& state) {
    auto answer = state.take_any();
    detail::observe_answer_delivered(*cell_, state, answer);
    return answer;
  }
  template <class T>
  std::vector<Result<T, RequestError>> take_all(detail::RequestState<T>& state) {
    auto answers = state.take_all();
    for (const auto& answer : answers) detail::observe_answer_delivered(*cell_, state, answer);
    return answers;
  }

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<detail::ActorCell> cell_;
  std::chrono::milliseconds timeout_;
};

/// Starts `subject` under test with `config_toml` as its config section.
[[nodiscard]] Proxy proxy(Blueprint subject, std::string config_toml = {}, ProxyOptions options = {});

/// Starts a whole `topology` with the proxy's group added, routed both ways to its group named
/// `subject` (for tests of several groups, e.g. with the configurer and a config file). Other
/// groups are reached by address: `proxy.request_fallible(r, proxy.system().group_addr("x"))`.
[[nodiscard]] Proxy proxy(Topology topology, std::string_view subject, StartOptions start, ProxyOptions options = {});

}  // namespace elfin::testing
