// The clock of per-message telemetry: send stamps (`created_at`), waiting, handling and busy
// times. Telemetry reads it twice per message (at the send and at the receive), so its cost is
// most of what telemetry costs; elfo reads the CPU's time-stamp counter (through quanta) for the
// same reason.
//
// Where the kernel itself keeps time with the TSC (clocksource "tsc": invariant and synchronized
// across CPUs), `telemetry_now()` is one RDTSC scaled to nanoseconds and placed on steady_clock's
// time line: about half a `clock_gettime` here. Elsewhere it is `steady_clock::now()`. The scale is
// calibrated once per process against steady_clock (a spin of about 2 ms, when the first system
// with telemetry starts). Its readings may drift from steady_clock's by the calibration error
// (~1e-5 of the time since calibration), so compare them with each other, not with
// steady_clock: durations between two telemetry readings are what it is for.
//
// Thread safety: any thread. The calibration is immutable once published (release store of a
// pointer, acquire load in `telemetry_now`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace elfin::detail {

struct TscCalibration {
  std::uint64_t tsc0 = 0;
  std::int64_t steady0_ns = 0;  ///< steady_clock at tsc0
  double ns_per_tick = 0;
};

/// Null until `calibrate_telemetry_clock` found a TSC to trust.
inline std::atomic<const TscCalibration*> g_tsc_calibration{nullptr};

/// Calibrates once per process (later calls return at once). Before telemetry is turned on.
void calibrate_telemetry_clock();

[[nodiscard]] inline std::chrono::steady_clock::time_point telemetry_now() noexcept {
#if defined(__x86_64__)
  if (const TscCalibration* c = g_tsc_calibration.load(std::memory_order_acquire)) {
    const auto ticks = static_cast<double>(static_cast<std::int64_t>(__rdtsc() - c->tsc0));
    return std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(c->steady0_ns + static_cast<std::int64_t>(ticks * c->ns_per_tick)));
  }
#endif
  return std::chrono::steady_clock::now();
}

}  // namespace elfin::detail
