// SendOp: delivering one envelope to the actors routing chose, with the mailbox-full policy of
// the call (`send` waits, `try_send` gives up, `unbounded_send` ignores capacity).
//
// A SendOp resolves its recipients once, then `run` pushes to them in order. In Bounded mode a
// full mailbox registers the sender's cell as a waiter and `run` returns false; the next `run`
// (after the wake) continues with the same recipient, so each recipient still receives the
// messages of one sender in order.
//
// Thread safety: owned by one actor (or one proxy thread).
#pragma once

#include <cstddef>
#include <optional>

#include <elfin/addr.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

class ActorCell;
class GroupRuntime;
class SystemCore;

enum class SendMode : unsigned char { Bounded, Try, Unbounded };

class SendOp {
 public:
  /// Two-level routing from the sender's group: inter-group routes, then each group's router.
  SendOp(GroupRuntime& from, Envelope envelope, SendMode mode);
  /// Direct: a group address (its router only) or an actor address (no routing).
  SendOp(SystemCore& system, Addr to, Envelope envelope, SendMode mode);
  SendOp(SendOp&&) noexcept = default;
  /// The sender is a thread that runs no actor (a Caller): a recipient whose group has a
  /// DirectSink gets the message through it, on this thread. `alone`: the sender waits for no
  /// other answer, so a request is worth writing at once (DirectSink::carry).
  void carry_directly(bool alone) {
    direct_ = true;
    alone_ = alone;
  }

  /// Pushes to the remaining recipients; false while waiting for space (Bounded mode only).
  bool run(ActorCell* waiter);
  /// Bounded mode, from outside any actor: pushes until a mailbox is full and stops there (false)
  /// without waiting; a later `run(waiter)` continues with that recipient.
  bool run_until_full();
  [[nodiscard]] bool finished() const { return finished_; }
  [[nodiscard]] Result<void, SendErrorKind> result() const;
  /// The envelope a failed send still holds (no mailbox took it), for giving the message back.
  [[nodiscard]] Envelope take_envelope() && { return std::move(envelope_); }
  /// `result()` with the message given back on failure (see SendError).
  template <Message M>
  [[nodiscard]] SendResult<M> typed_result() && {
    auto r = result();
    if (r) return {};
    return Err{SendError<M>{r.error(), std::move(*this).take_envelope().template take_message<M>()}};
  }

 private:
  Envelope envelope_;
  Targets targets_;
  std::size_t next_ = 0;
  SendMode mode_;
  bool finished_ = false;
  bool any_ok_ = false;
  bool any_full_ = false;
  bool stop_at_full_ = false;
  bool direct_ = false;
  bool alone_ = false;
  bool routed_ = false;  // recipients chosen by routing, not an actor's address: a closed one has a successor
  std::optional<SendErrorKind> resolve_error_;
};

/// Sends a received envelope on to `to`, never waiting (Context::try_forward_to). On failure
/// `envelope` holds it again, with the answer duty it came with.
Result<void, SendErrorKind> forward_envelope(SystemCore& system, Addr to, Envelope& envelope);

}  // namespace elfin::detail
