// Envelope: a message in flight, with who sent it, its trace id, its kind and when it was sent.
//
// An Envelope is a move-only handle to one allocation (header + message). When a message goes to
// several actors, each mailbox holds its own handle to the same immutable block.
//
// A handle delivered to a mailbox carries the obligation to answer if the message is a request:
// if the recipient drops it without taking the token, the requester gets `Ignored`; if it is
// dropped unreceived (the recipient finished first), `Failed`.
//
// Thread safety: distinct handles are safe to use from different threads; one handle is not.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <utility>

#include <elfin/addr.hpp>
#include <elfin/message.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

template <Request R>
class ResponseToken;

using MessageKind = detail::MessageKind;

namespace detail {
struct EnvelopeAccess;
}  // namespace detail

class Envelope {
 public:
  Envelope() = default;
  Envelope(Envelope&& other) noexcept : block_(std::exchange(other.block_, nullptr)), flags_(other.flags_) {}
  Envelope& operator=(Envelope&& other) noexcept {
    if (this != &other) {
      release();
      block_ = std::exchange(other.block_, nullptr);
      flags_ = other.flags_;
    }
    return *this;
  }
  Envelope(const Envelope&) = delete;
  Envelope& operator=(const Envelope&) = delete;
  ~Envelope() { release(); }

  /// Wraps `message` in a new envelope to be sent (one allocation). With telemetry on, a sample
  /// of sends carries a send stamp for waiting time (detail::send_stamp).
  template <Message M>
  [[nodiscard]] static Envelope make(M message, Addr sender, TraceId trace_id, MessageKind kind = MessageKind::Regular);

  [[nodiscard]] bool valid() const { return block_ != nullptr; }
  [[nodiscard]] const MessageVTable& vtable() const { return *block_->vtable; }
  [[nodiscard]] std::string_view protocol() const { return block_->vtable->protocol; }
  [[nodiscard]] std::string_view name() const { return block_->vtable->name; }
  [[nodiscard]] Addr sender() const { return block_->sender; }
  [[nodiscard]] TraceId trace_id() const { return block_->trace_id; }
  [[nodiscard]] MessageKind kind() const { return block_->kind; }
  /// When it was sent, if the runtime records it (telemetry turns this on); the clock's epoch otherwise.

  template <Message M>
  [[nodiscard]] bool is() const {
    return block_ && block_->vtable == &vtable_of<M>();
  }
  /// The message if it is an `M`, else nullptr.
  template <Message M>
  [[nodiscard]] const M* get() const {
    return is<M>() ? &static_cast<const detail::TypedBlock<M>*>(block_)->message : nullptr;
  }
  /// The message moved out of a handle nobody else shares (a send that reached no mailbox), or a
  /// copy when another handle (a dump waiting to be written) still reads it. The handle must hold
  /// an `M`.
  template <Message M>
  [[nodiscard]] M take_message() && {
    auto* typed = static_cast<detail::TypedBlock<M>*>(block_);
    // Acquire: a handle released on another thread is fully done with the message before we move it.
    if (block_->refs.load(std::memory_order_acquire) == 1) return std::move(typed->message);
    return typed->message;
  }
  /// The message, type-erased (see `vtable()`).
  [[nodiscard]] const void* data() const { return block_->vtable->data(block_); }

  /// Takes the answer obligation of a received request. A request sent with a plain `send`
  /// yields a "forgotten" token: answering it does nothing.
  template <Request R>
  [[nodiscard]] ResponseToken<R> take_token();

  // --- runtime internals -------------------------------------------------------------------
 private:
  friend struct detail::EnvelopeAccess;
  /// The same for a message handed straight to an actor without queueing (a source's item, the
  /// runtime's ConfigUpdated): it waits in no mailbox, so it takes no send stamp.
  template <Message M>
  [[nodiscard]] static Envelope make_unqueued(M message, Addr sender, TraceId trace_id);
  /// Another handle to the same block, without any answer obligation.
  [[nodiscard]] Envelope share() const {
    block_->refs.fetch_add(1, std::memory_order_relaxed);
    return Envelope{block_, 0};
  }

  explicit Envelope(detail::EnvelopeBlock* block, std::uint8_t flags = 0) : block_(block), flags_(flags) {}
  [[nodiscard]] bool obligated() const { return (flags_ & kObligated) != 0; }
  void discharge() { flags_ &= static_cast<std::uint8_t>(~kObligated); }

  static constexpr std::uint8_t kObligated = 1;
  static constexpr std::uint8_t kReceived = 2;

  void release() noexcept;
  void settle_obligation() noexcept;

  detail::EnvelopeBlock* block_ = nullptr;
  std::uint8_t flags_ = 0;
};

namespace detail {
/// The runtime's side of an envelope, kept off its public interface: the block it points to, the
/// answer obligation a delivered request carries, and handles made without one.
struct EnvelopeAccess {
  [[nodiscard]] static EnvelopeBlock* block(const Envelope& e) { return e.block_; }
  [[nodiscard]] static Envelope adopt(EnvelopeBlock* block) { return Envelope{block}; }
  /// A handle to `block` with the flags of the handle that was queued (a mailbox gives it back).
  [[nodiscard]] static Envelope adopt(EnvelopeBlock* block, std::uint8_t flags) { return Envelope{block, flags}; }
  [[nodiscard]] static std::uint8_t flags(const Envelope& e) { return e.flags_; }
  /// Empties the handle without releasing its reference: a mailbox keeps it (see `adopt`).
  [[nodiscard]] static EnvelopeBlock* release_to_queue(Envelope& e) {
    e.flags_ = 0;
    return std::exchange(e.block_, nullptr);
  }
  /// Another handle to the same block, without any answer obligation.
  [[nodiscard]] static Envelope share(const Envelope& e) { return e.share(); }
  template <Message M>
  [[nodiscard]] static Envelope make_unqueued(M message, Addr sender, TraceId trace_id) {
    return Envelope::make_unqueued(std::move(message), sender, trace_id);
  }
  static void mark_obligated(Envelope& e) { e.flags_ |= Envelope::kObligated; }
  static void mark_received(Envelope& e) { e.flags_ |= Envelope::kReceived; }
  [[nodiscard]] static bool obligated(const Envelope& e) { return e.obligated(); }
  /// Releases the handle's answer obligation without answering (the runtime answered itself).
  static void discharge(Envelope& e) { e.discharge(); }
};
}  // namespace detail

template <Message M>
Envelope Envelope::make(M message, Addr sender, TraceId trace_id, MessageKind kind) {
  Envelope envelope = make_unqueued(std::move(message), sender, trace_id);
  envelope.block_->kind = kind;
  envelope.block_->sent_at = detail::send_stamp();
  return envelope;
}

template <Message M>
Envelope Envelope::make_unqueued(M message, Addr sender, TraceId trace_id) {
  auto* block = new detail::TypedBlock<M>(std::move(message));
  block->vtable = &vtable_of<M>();
  block->sender = sender;
  block->trace_id = trace_id;
  return Envelope{block};
}

}  // namespace elfin
