// The named errors of messaging. Each is a value returned in a `Result`, never an exception.
//
//   SendError<M>  — a send reached no mailbox (SendErrorKind: no route, closed, full for
//                   `try_send`, unknown address). It gives the message back, as elfo's
//                   `SendError(M)` does, so the caller can retry or reroute without a copy.
//   RequestError  — a request got no answer: Failed (it reached no one, its recipient finished
//                   before handling it, or failed while handling it — with the reason), Ignored
//                   (handled, but the token was dropped unanswered), or TimedOut (a call with a
//                   deadline — an elfin::Caller or `ctx.request(r).timeout(d)` — gave up
//                   waiting; the outcome is unknown).
//   TryRecvError  — Empty or Closed.
//
// A send gives a SendResult<M>, which (unlike every other Result) may be ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <elfin/result.hpp>

namespace elfin {

enum class SendErrorKind : std::uint8_t {
  NoRoute,      ///< no inter-group route matched, or routers chose no actor (Outcome::Discard)
  Closed,       ///< every chosen recipient's mailbox is closed
  Full,         ///< every chosen recipient's mailbox is full (try_send only)
  UnknownAddr,  ///< `*_to(addr)`: no actor or group lives at that address
};

[[nodiscard]] std::string_view to_string(SendErrorKind e);

/// A failed send: why, and the message that was not delivered, handed back to the caller.
template <class M>
class SendError {
 public:
  SendError(SendErrorKind kind, M message) : message_(std::move(message)), kind_(kind) {}

  [[nodiscard]] SendErrorKind kind() const noexcept { return kind_; }
  /// The undelivered message.
  [[nodiscard]] const M& message() const& noexcept { return message_; }
  /// Takes the undelivered message back (e.g. to send it elsewhere).
  [[nodiscard]] M into_message() && { return std::move(message_); }

  friend bool operator==(const SendError& e, SendErrorKind kind) noexcept { return e.kind_ == kind; }

 private:
  M message_;
  SendErrorKind kind_;
};

template <class M>
[[nodiscard]] std::string_view to_string(const SendError<M>& e) {
  return to_string(e.kind());
}

/// What a send gives: success, or the SendError with the message. The one result that may be
/// dropped without a warning: a send whose failure does not matter is common (`co_await
/// ctx.send(m);`, elfo's `let _ = ctx.send(m).await`); requests and everything else stay
/// [[nodiscard]].
template <class M>
class SendResult : public Result<void, SendError<M>> {
 public:
  using Result<void, SendError<M>>::Result;
};

namespace detail {
/// The reasons the runtime gives (one wording everywhere).
inline constexpr std::string_view kReachedNoOne = "the request reached no one";
inline constexpr std::string_view kFinishedFirst = "the recipient finished before handling it";
inline constexpr std::string_view kFailedWhileHandling = "the recipient failed while handling it";
}  // namespace detail

/// Why a request got no answer.
class RequestError {
 public:
  /// Unscoped on purpose: `error == RequestError::Ignored` reads as the kind it compares.
  enum Kind : std::uint8_t {
    Failed,   ///< reached no one, or its recipient finished or failed before answering
    Ignored,  ///< the recipient handled the request but dropped its token without answering
    /// The requester's deadline passed first (an elfin::Caller's timeout, or an actor's
    /// `ctx.request(r).timeout(d)`). The request may still have been handled: its outcome is unknown.
    TimedOut,
    /// The elfin::Caller (or light node) was stopped before an answer came, or was already
    /// stopped when the call was made. The request may have been handled.
    Stopped,
  };

  RequestError(Kind kind = Failed, std::string reason = {})  // NOLINT: a Kind is an error
      : reason_(std::move(reason)), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// What happened, for Failed: e.g. "the recipient failed while handling it: <what()>". May be
  /// empty for errors made without one.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  /// Failed before any actor got it (no route carried it, every router chose no actor, no node of
  /// a remote group was connected): nothing handled it, so sending it again cannot apply it twice.
  [[nodiscard]] bool reached_no_one() const noexcept { return kind_ == Failed && reason_ == detail::kReachedNoOne; }

  friend bool operator==(const RequestError& e, Kind kind) noexcept { return e.kind_ == kind; }
  friend bool operator==(const RequestError& a, const RequestError& b) = default;

 private:
  std::string reason_;
  Kind kind_;
};

enum class TryRecvError : std::uint8_t { Empty, Closed };

/// "failed: <reason>" or "ignored: ...".
[[nodiscard]] std::string to_string(const RequestError& e);
[[nodiscard]] std::string_view to_string(TryRecvError e);

}  // namespace elfin

template <class E>
  requires std::is_same_v<E, elfin::SendErrorKind> || std::is_same_v<E, elfin::RequestError> ||
           std::is_same_v<E, elfin::TryRecvError>
struct fmt::formatter<E> : fmt::formatter<std::string_view> {
  auto format(const E& e, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::to_string(e), ctx);
  }
};

template <class M>
struct fmt::formatter<elfin::SendError<M>> : fmt::formatter<std::string_view> {
  auto format(const elfin::SendError<M>& e, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::to_string(e.kind()), ctx);
  }
};
