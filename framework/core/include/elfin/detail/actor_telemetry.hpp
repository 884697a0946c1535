// ActorTelemetry: what one actor keeps between telemetry hooks — the GroupSeries of the thread it
// runs on, the series slots it last used, and the open handling-time window.
//
// Handling windows. Handling time ends at the next recv, so measuring every message exactly takes
// one clock reading per message, and on this project's 2-core VM a reading (RDTSC) is a tenth of
// a whole 1→1 send, more than telemetry's budget alone. But the histogram's first bucket is
// "≤ 1 µs": for a stream of short messages it only needs to know that each took at most 1 µs,
// and the _sum only needs their total. So, once an actor has handled kCalmRun messages in a row
// in at most kCalmNs each, further messages of the same type join a window without a reading;
// the next reading (at the latest after kWindow messages, or when the type changes, a message
// carries a send stamp, the mailbox runs dry, recv yields for the budget) closes it:
// - a window that took at most 1 µs puts all its messages in the first bucket, its time in _sum:
//   exactly what per-message readings would have recorded;
// - a window that took longer (the stream slowed down) gives its whole time to one message and
//   the others 0 s, and the actor goes back to reading per message until it is calm again. Count
//   and _sum stay exact; only that window's split between its messages is a guess, and this one
//   keeps a slow message in its own (slow) bucket, which is what latency alerts look at.
//
// Thread safety: only the thread running the actor touches it.
#pragma once

#include <cstdint>

#include <elfin/detail/group_series.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/message.hpp>

namespace elfin::detail {

/// The slot an actor last used in a GroupSeries: a repeated message type skips the search.
class SlotMemo {
 public:
  [[nodiscard]] MessageSeries& get(GroupSeries& series, const MessageVTable& message) {
    if (series_ != &series || message_ != &message) {
      slot_ = &series.of(message);
      series_ = &series;
      message_ = &message;
    }
    return *slot_;
  }

 private:
  // GroupSeries live as long as their MetricsStorage (the system), so an address is never reused
  // for another series while an actor of that system remembers it.
  const GroupSeries* series_ = nullptr;
  const MessageVTable* message_ = nullptr;
  MessageSeries* slot_ = nullptr;
};

/// Identifies the calling thread: the address of this thread's instance of a thread-local (a
/// single instruction to compute, unlike a lookup of the thread's shard).
inline thread_local char t_thread_tag = 0;
[[nodiscard]] inline const void* this_thread_tag() noexcept { return &t_thread_tag; }

// Not on cache lines of its own, although the actor's thread writes it per message while senders
// on other cores read the cell: the 1→1 benchmark showed no difference either way, and the
// alignment would make every cell an over-aligned allocation (glibc's memalign path, several
// times the cost of a plain one) on every spawn.
struct ActorTelemetry {
  static constexpr std::uint32_t kWindow = 8;  ///< messages per window at most
  /// A calm message's handling time: a window of kWindow of them stays within the first bucket.
  static constexpr std::uint64_t kCalmNs = SeriesHistogram::kBoundsNs[0] / kWindow;
  static constexpr std::uint32_t kCalmRun = 8;  ///< calm messages in a row before windows

  // The calling thread's GroupSeries, valid while `series_thread` is this thread's tag and the
  // group's per_actor_key is `series_keyed`. A thread that ended and left its tag's address to a
  // new one is harmless: the series it wrote has no other writer left.
  GroupSeries* series = nullptr;
  const void* series_thread = nullptr;
  bool series_keyed = false;
  SlotMemo sent;     ///< elfin_sent_messages_total
  SlotMemo handled;  ///< elfin_message_handling_time_seconds

  // The open window: `pending` messages of type `handling` (the last still being handled) since
  // the reading `since`. `handling` null: nothing is being handled.
  const MessageVTable* handling = nullptr;
  TelemetryStamp since = 0;
  std::uint32_t pending = 0;
  std::uint32_t calm = 0;  ///< messages measured alone in a row that took at most kCalmNs

  /// Whether `received` can join the open window without a clock reading.
  [[nodiscard]] bool joins_window(const MessageVTable* received, TelemetryStamp sent_at) const noexcept {
    return received == handling && received != nullptr && sent_at == 0 && calm >= kCalmRun && pending < kWindow;
  }
};

}  // namespace elfin::detail
