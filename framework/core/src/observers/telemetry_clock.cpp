#include <elfin/detail/telemetry_clock.hpp>

#include <cmath>
#include <fstream>
#include <mutex>
#include <string>

namespace elfin::detail {

namespace {

// The kernel keeps CLOCK_MONOTONIC with the TSC only when it found it invariant and synchronized
// across CPUs (and keeps checking: it switches away from an unstable one). We trust it exactly
// when the kernel does, at start-up.
bool kernel_uses_tsc() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(in >> source) && source == "tsc";
}

#if defined(__x86_64__)
// One (tsc, steady) pair read as close together as we can: the tightest of a few tries.
struct Pair {
  std::uint64_t tsc;
  std::int64_t steady_ns;
};
Pair read_pair() {
  Pair best{};
  std::uint64_t best_gap = ~std::uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t before = __rdtsc();
    const auto steady = std::chrono::steady_clock::now().time_since_epoch();
    const std::uint64_t after = __rdtsc();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = Pair{before + (after - before) / 2, std::chrono::duration_cast<std::chrono::nanoseconds>(steady).count()};
    }
  }
  return best;
}
#endif

}  // namespace

void calibrate_telemetry_clock() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__x86_64__)
    if (!kernel_uses_tsc()) return;
    const Pair start = read_pair();
    // 2 ms apart: a pair's uncertainty (tens of ns) is then ~1e-5 of the interval.
    Pair end = read_pair();
    while (end.steady_ns - start.steady_ns < 2'000'000) end = read_pair();
    if (end.tsc <= start.tsc) return;  // not a counter we understand
    const double ns_per_tick =
        static_cast<double>(end.steady_ns - start.steady_ns) / static_cast<double>(end.tsc - start.tsc);
    static TscCalibration calibration;
    calibration.ns_per_tick_q32 = static_cast<std::uint64_t>(std::llround(ns_per_tick * 4294967296.0));
    g_tsc_calibration.store(&calibration, std::memory_order_release);
#endif
  });
}

}  // namespace elfin::detail
