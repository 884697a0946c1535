// The clock of per-message telemetry: send stamps (`created_at`), waiting, handling and busy
// times. Telemetry reads it twice per message (at the send and at the receive), so its cost is
// most of what telemetry costs; elfo reads the CPU's time-stamp counter (through quanta) for the
// same reason.
//
// Where the kernel itself keeps time with the TSC (clocksource "tsc": invariant and synchronized
// across CPUs), a reading is one RDTSC: about half a `clock_gettime` here. Elsewhere it is
// `steady_clock::now()`. The TSC's scale is calibrated once per process against steady_clock (a
// spin of about 2 ms, when the first system with telemetry starts); durations are off by the
// calibration error (~1e-5).
//
// Thread safety: any thread. The calibration is immutable once published (release store of a
// pointer, acquire loads here).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace elfin::detail {

/// A reading of the telemetry clock: TSC ticks where the TSC is trusted, else steady_clock's
/// nanoseconds. Only the difference of two readings means something (`telemetry_elapsed_ns`);
/// readings are kept raw so that taking one is a single RDTSC, and the scaling (an integer
/// multiply) is paid only when a duration is recorded. 0 means "no reading".
using TelemetryStamp = std::uint64_t;

struct TscCalibration {
  std::uint64_t ns_per_tick_q32 = 0;  ///< nanoseconds per tick, fixed point with 32 fractional bits
};

/// Null until `calibrate_telemetry_clock` found a TSC to trust; never changes after that, and
/// stamps are only taken after it ran (a telemeter calibrates before turning stamps on), so two
/// readings are always of the same kind.
inline std::atomic<const TscCalibration*> g_tsc_calibration{nullptr};

/// Calibrates once per process (later calls return at once). Before telemetry is turned on.
void calibrate_telemetry_clock();

[[nodiscard]] inline TelemetryStamp telemetry_stamp() noexcept {
#if defined(__x86_64__)
  if (g_tsc_calibration.load(std::memory_order_acquire) != nullptr) return __rdtsc();
#endif
  return static_cast<TelemetryStamp>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

/// Nanoseconds from `from` to `to` (0 if `to` is not later).
[[nodiscard]] inline std::uint64_t telemetry_elapsed_ns(TelemetryStamp from, TelemetryStamp to) noexcept {
  if (to <= from) return 0;
  const std::uint64_t delta = to - from;
  const TscCalibration* c = g_tsc_calibration.load(std::memory_order_acquire);
  if (c == nullptr) return delta;
  // delta * q32 >> 32 without a 128-bit product: split delta into its high and low 32 bits (the
  // high part times q32, below 2^32, cannot overflow for any delta).
  const std::uint64_t q32 = c->ns_per_tick_q32;
  return (delta >> 32) * q32 + (((delta & 0xFFFF'FFFFU) * q32) >> 32);
}

}  // namespace elfin::detail
