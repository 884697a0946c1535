// Signal<M>: a source that sends the actor a copy of `M` whenever the process receives a Unix
// signal.
//
//   ctx.attach(Signal(SignalKind::Hangup, ReopenFiles{}));
//
// Every attached Signal source for a signal gets it, in every actor. The system listens with one
// Asio signal set on a thread of its own, started by the first attached Signal source; from then
// on the signal no longer has its default effect (a SIGHUP would otherwise kill the process)
// until the system stops. `elfin::run` keeps stopping the system on SIGTERM / SIGINT whether or
// not an actor also listens to them. Signals that arrive faster than the actor takes them are
// merged into one message. Each message starts a new trace.
//
// Thread safety: a handle is used from its actor only.
#pragma once

#include <csignal>
#include <memory>
#include <string_view>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/signal_core.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

enum class SignalKind : unsigned char {
  Hangup,     ///< SIGHUP: by convention, reload configs / reopen files
  User1,      ///< SIGUSR1
  User2,      ///< SIGUSR2
  Terminate,  ///< SIGTERM
  Interrupt,  ///< SIGINT
};

/// The signal number of `kind`.
[[nodiscard]] constexpr int signal_number(SignalKind kind) {
  switch (kind) {
    case SignalKind::Hangup:
      return SIGHUP;
    case SignalKind::User1:
      return SIGUSR1;
    case SignalKind::User2:
      return SIGUSR2;
    case SignalKind::Terminate:
      return SIGTERM;
    case SignalKind::Interrupt:
      return SIGINT;
  }
  return 0;
}

namespace detail {
template <Message M>
class SignalState final : public SignalCore {
 public:
  SignalState(int signo, M message) : SignalCore(signo), message_(std::move(message)) {}

 private:
  Envelope make_message(ActorCell& cell) override {
    return detail::EnvelopeAccess::make_unqueued(M(message_), cell.addr(), TraceId::generate());
  }
  const M message_;
};
}  // namespace detail

template <Message M>
class Signal {
 public:
  Signal(SignalKind kind, M message)
      : state_(std::make_shared<detail::SignalState<M>>(signal_number(kind), std::move(message))) {}

  /// Stops listening for good.
  void terminate() { state_->detach(); }
  [[nodiscard]] bool is_terminated() const { return state_->finished(); }

  [[nodiscard]] std::shared_ptr<detail::SourceBase> source_core() const { return state_; }

 private:
  std::shared_ptr<detail::SignalState<M>> state_;
};

}  // namespace elfin
