// Pacer: the schedule of a fixed-rate (open-loop) load. Operation i is *intended* to start at
// `start + i / rate`, whether or not the ones before it have finished; a worker waits until its next
// intended start (or starts at once when it is late) and measures latency from the intended start,
// not from when it actually sent.
//
// Why: a closed-loop client that waits for each answer before sending the next sends nothing while
// the server stalls, so a 1 s stall shows up as one slow request instead of the rate × 1 s requests
// that real users would have sent into it and waited on (Gil Tene's "coordinated omission"). Timing
// from the intended start charges each of them the wait it would really have had; a worker that
// falls behind catches up by sending back to back, and the histogram shows the stall at its true
// weight. The achieved rate can be lower than asked when the server cannot keep up; the report
// says both.
//
// Several workers share one schedule: worker w of W takes operations w, w + W, w + 2W, ... with a
// pacer made as Pacer(rate, start, w, W).
//
//   Pacer pacer(10'000, Pacer::Clock::now(), worker, workers);
//   for (;;) {
//     const auto intended = pacer.next();
//     std::this_thread::sleep_until(intended);                    // returns at once when late
//     do_request();
//     histogram.record(Pacer::since(intended, Pacer::Clock::now()));
//   }
//
// Thread safety: a plain value; one worker each.
#pragma once

#include <chrono>
#include <cstdint>

namespace elfin::loadgen {

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;

  /// `rate` operations per second over the whole schedule (> 0); this pacer takes operations
  /// `offset`, `offset + stride`, ... of it.
  Pacer(double rate, Clock::time_point start, std::uint64_t offset = 0, std::uint64_t stride = 1);

  /// The intended start of this pacer's next operation, and moves on to the one after.
  [[nodiscard]] Clock::time_point next();
  /// The intended start of the schedule's operation `i`.
  [[nodiscard]] Clock::time_point intended(std::uint64_t i) const;
  /// Operations this pacer handed out so far.
  [[nodiscard]] std::uint64_t issued() const { return issued_; }

  /// Nanoseconds from `intended` to `done` (0 if `done` is earlier): the latency to record.
  [[nodiscard]] static std::uint64_t since(Clock::time_point intended, Clock::time_point done);

 private:
  double rate_;
  Clock::time_point start_;
  std::uint64_t offset_;
  std::uint64_t stride_;
  std::uint64_t issued_ = 0;
};

}  // namespace elfin::loadgen
