// GroupDumping: one group's side of dumping — whether it records at all, its rate limit and its
// sequence numbers — and the hooks the runtime calls where messages are received and sent.
//
// Sequence numbers count the dumps the rate limit let through, per group, from 1. A stretch of
// dumps the limit dropped, however long, skips one number; a dump lost to a full storage skips
// one too (it had its number). So any gap says dumps are missing there; how many the limit
// dropped is `elfin_limited_dumps_total`. Counting every dropped dump into the numbers would
// cost the group's shared atomic on every message of a stream over its limit.
//
// The hooks cost one relaxed load when dumping is off (no `system.dumpers`, or the group's
// `system.dumping.disabled`), which is the case that must stay fast. A stream over its group's
// limit is the other: a dump the limit drops costs a few loads and stores inline (the thread's
// refusal pass below), with no call, clock read or read-modify-write.
//
// Thread safety: `record*` from any thread (the recording actor's); `attach` before the system
// starts; `configure` from any thread (a config update), racing harmlessly with recorders.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <elfin/detail/rate_limiter.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>

namespace elfin::dumping {
struct Dump;
class DumpStorage;
}  // namespace elfin::dumping

namespace elfin::detail {

class ActorCell;
class GroupDumping;

/// A thread's pass to drop a limited group's dumps without asking the limiter: a refusal inside
/// an actor's run (at a fresh reading of the limit's clock) arms it for the group's next
/// `kDumpRefusalsPerPass` dumps on this thread within that run, and every run's start and end
/// clears it (CurrentActorScope). While it stands the limiter's verdict could only change through
/// a config update (its state only moves forward), so the pass refuses what the limiter would
/// have refused at that reading; a window reopens at most that many dumps late for this thread
/// (microseconds of a dense stream), and a thread back from idle always reads the clock again.
struct DumpRefusalPass {
  const GroupDumping* group = nullptr;
  std::atomic<std::uint64_t>* limited = nullptr;  ///< the thread's own count of limited dumps
  std::uint32_t left = 0;
};
inline constexpr std::uint32_t kDumpRefusalsPerPass = 64;
inline thread_local DumpRefusalPass t_dump_refusal_pass;

class GroupDumping {
 public:
  /// Dumping happens only once a storage is attached (the topology has `system.dumpers`).
  void attach(dumping::DumpStorage* storage, const std::string* group_name);
  void configure(const DumpingConfig& config);

  [[nodiscard]] bool active() const { return active_.load(std::memory_order_relaxed); }

  /// Records `envelope` as received or sent by `cell` (which runs on the calling thread).
  void record(ActorCell& cell, dumping::Direction direction, const Envelope& envelope) {
    const MessageVTable& vtable = envelope.vtable();
    if (!vtable.dumping_allowed || refused_by_pass()) return;
    record_unless_limited(cell, direction, envelope);
  }
  /// Whether the thread's refusal pass drops this group's next dump (counting it as limited).
  [[nodiscard]] bool refused_by_pass() {
    DumpRefusalPass& pass = t_dump_refusal_pass;
    if (pass.left == 0 || pass.group != this) return false;
    --pass.left;
    note_dropped();
    // Only this thread writes its counter: a load and a store, no read-modify-write.
    pass.limited->store(pass.limited->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return true;
  }
  /// Records a response: it travels without an envelope, so its body comes encoded.
  void record_response(ActorCell& cell, dumping::Direction direction, const MessageVTable& request, std::string encoded,
                       TraceId trace_id, std::uint64_t correlation_id);

  /// The step of `record` that asks the rate limit whether the dump may pass and, if it may, takes
  /// the next sequence number (one more is skipped after dumps were dropped: the gap that shows
  /// them); separate so tests can drive it with their own clock.
  [[nodiscard]] bool admit(std::uint64_t now_ns, std::uint64_t& sequence_no);

 private:
  /// `record` past the inline checks: asks the limit, then records.
  void record_unless_limited(ActorCell& cell, dumping::Direction direction, const Envelope& envelope);
  /// `admit` at the coarse clock's time, counting a dropped dump as limited (and arming the
  /// thread's refusal pass).
  bool admit_or_count(std::uint64_t& sequence_no);
  /// The next sequence number, skipping one if dumps were dropped since the last.
  std::uint64_t take_sequence_no();
  /// Marks that the limit dropped a dump (the next number taken skips one). Written once per
  /// stretch of drops, read on every one: the line stays shared, not bounced.
  void note_dropped() {
    if (!dropped_.load(std::memory_order_relaxed)) dropped_.store(true, std::memory_order_relaxed);
  }
  /// Fills in what every dump has: the group, the sequence number, the time, the thread.
  void fill_common(dumping::Dump& dump, std::uint64_t sequence_no) const;

  dumping::DumpStorage* storage_ = nullptr;
  const std::string* group_name_ = nullptr;
  std::atomic<bool> active_{false};
  bool disabled_ = false;  // written by configure only; active_ publishes the result
  RateLimiter limiter_{DumpingConfig{}.max_rate};
  std::atomic<std::uint64_t> next_sequence_no_{1};
  std::atomic<bool> dropped_{false};  // the limit dropped a dump since the last number was taken
};

/// A new id linking a request's dumps with its responses'.
[[nodiscard]] std::uint64_t next_correlation_id();

}  // namespace elfin::detail
