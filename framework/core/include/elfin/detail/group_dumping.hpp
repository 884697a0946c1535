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
// `system.dumping.disabled`), which is the case that must stay fast.
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

namespace elfin::dumping {
struct Dump;
class DumpStorage;
}  // namespace elfin::dumping

namespace elfin::detail {

class ActorCell;

class GroupDumping {
 public:
  /// Dumping happens only once a storage is attached (the topology has `system.dumpers`).
  void attach(dumping::DumpStorage* storage, const std::string* group_name);
  void configure(const DumpingConfig& config);

  [[nodiscard]] bool active() const { return active_.load(std::memory_order_relaxed); }

  /// Records `envelope` as received or sent by `cell` (which runs on the calling thread).
  void record(ActorCell& cell, dumping::Direction direction, const Envelope& envelope);
  /// Records a response: it travels without an envelope, so its body comes encoded.
  void record_response(ActorCell& cell, dumping::Direction direction, const MessageVTable& request, std::string encoded,
                       TraceId trace_id, std::uint64_t correlation_id);

  /// The step of `record` that asks the rate limit whether the dump may pass and, if it may, takes
  /// the next sequence number (one more is skipped after dumps were dropped: the gap that shows
  /// them); separate so tests can drive it with their own clock.
  [[nodiscard]] bool admit(std::uint64_t now_ns, std::uint64_t& sequence_no);

 private:
  /// `admit` at the coarse clock's time, counting a dropped dump as limited.
  bool admit_or_count(std::uint64_t& sequence_no);
  /// The next sequence number, skipping one if dumps were dropped since the last.
  std::uint64_t take_sequence_no();
  /// Marks that the limit dropped a dump (the next number taken skips one).
  void note_dropped();
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
