// The single allocation behind an Envelope: a header followed by the message.
//
// A block is immutable once sent and shared (reference counted) by every mailbox it was delivered
// to, so a multicast neither copies nor serializes the message.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include <elfin/addr.hpp>
#include <elfin/detail/block_pool.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {
struct MessageVTable;
}

namespace elfin::detail {

class RequestStateBase;

enum class MessageKind : std::uint8_t { Regular, Request, Response };

/// Whether envelopes record `sent_at`. Reading the clock is a measurable share of a send, and
/// only telemetry (waiting time) needs it, so it is off until a telemeter turns it on (after
/// calibrating the clock: release here, acquire below, so a stamp is never of the other kind).
inline std::atomic<bool> g_stamp_sends{false};

/// Which sends carry a stamp, so that waiting time is measured on a sample of the messages: a
/// clock reading costs about a tenth of a whole 1→1 send here, and telemetry's budget is 10%.
/// The first send an actor makes in each run is stamped, then one in kStampOneSendIn: an actor
/// that sends a message now and then has all of them measured, a producer streaming a million has
/// one in eight. Whether a send is stamped depends on its place in the run, not on the message or
/// its receiver, so the sample's quantiles are the stream's.
inline constexpr std::uint32_t kStampOneSendIn = 8;

/// Sends this thread makes before its next stamped one.
inline thread_local std::uint32_t t_sends_before_stamp = 0;

/// A worker begins a run of an actor: its next send is stamped.
inline void restart_send_sampling() noexcept { t_sends_before_stamp = 0; }

[[nodiscard]] inline TelemetryStamp send_stamp() {
  if (!g_stamp_sends.load(std::memory_order_acquire)) return 0;
  if (t_sends_before_stamp != 0) {
    --t_sends_before_stamp;
    return 0;
  }
  t_sends_before_stamp = kStampOneSendIn - 1;
  return telemetry_stamp();
}

/// A place in a mailbox's queue (elfin/internal/mailbox.hpp, an intrusive multi-producer list).
/// Every block carries one, so a message sent to one actor is queued without another allocation;
/// a block shared by several mailboxes (a multicast) is queued through a separate node instead.
/// Only the mailbox that holds the block (or node) touches these fields.
struct MailboxLink {
  std::atomic<MailboxLink*> next{nullptr};
  bool is_node = false;    ///< a MailboxNode (not the block's own link, nor a mailbox's stub)
  std::uint8_t flags = 0;  ///< the queued handle's Envelope flags (its answer obligation)
};

struct EnvelopeBlock : MailboxLink {
  // Counts Envelope handles. Increments are relaxed (a handle is only copied by one that already
  // holds a reference); the final decrement is acq_rel so the deleting thread sees every write
  // made through other handles — the usual shared_ptr argument.
  std::atomic<std::uint32_t> refs{1};
  MessageKind kind = MessageKind::Regular;
  const MessageVTable* vtable = nullptr;
  Addr sender;
  /// Set by a send to an address (`*_to`) before the block is shared: the network forwards the
  /// envelope to that actor on its node. Null for routed sends.
  Addr recipient;
  TraceId trace_id;
  TelemetryStamp sent_at = 0;                 ///< 0 unless stamped (send_stamp)
  std::shared_ptr<RequestStateBase> request;  ///< set for requests; answers go here
};

/// Blocks come from the block pool: a stream's blocks are freed on the receiver's thread, often
/// not the sender's, and a mailbox holds more of them than glibc's per-thread cache, so glibc
/// served them through its arenas (about 190 of the 1,150 instructions of a message of a 1 -> 1 or
/// 2 -> 1 stream); the pool's depot carries them back to the senders' threads in batches.
template <class M>
struct TypedBlock final : EnvelopeBlock {
  explicit TypedBlock(M&& m) : message(std::move(m)) {}
  M message;

  static void* operator new(std::size_t size) { return allocate_block(size); }
  static void operator delete(void* block, std::size_t size) noexcept { free_block(block, size); }
  // The pool's blocks are aligned as operator new aligns; an over-aligned message is not pooled.
  static void* operator new(std::size_t size, std::align_val_t align) { return ::operator new(size, align); }
  static void operator delete(void* block, std::size_t size, std::align_val_t align) noexcept {
    ::operator delete(block, size, align);
  }
};

}  // namespace elfin::detail
