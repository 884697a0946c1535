// What a load generator prints: one progress line per interval while it runs, and a final report.
//
//   [  5.0s] 12034 ops/s  p50 1.21ms  p99 4.50ms  p99.9 9.80ms  errors 3
//
//   ops        60170 in 5.00s: 12034 ops/s (asked 12000)
//   latency    p50 1.21ms  p99 4.50ms  p99.9 9.80ms  max 15.2ms  mean 1.40ms
//   errors     3: NotLeader 2, Timeout 1
//
// The latencies of a fixed-rate run are measured from each operation's intended start (see
// pacer.hpp); the report says which.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <elfin/loadgen/latency_histogram.hpp>

namespace elfin::loadgen {

/// Operations that failed, by kind ("NotLeader", "Timeout", ...), in name order.
using ErrorCounts = std::map<std::string, std::uint64_t>;

struct RunSummary {
  std::chrono::nanoseconds elapsed{0};
  std::uint64_t ops = 0;  ///< completed successfully
  LatencyHistogram latency;
  ErrorCounts errors;
  std::optional<double> target_rate;  ///< ops/s asked of a fixed-rate run
};

/// "850ns", "12.3µs", "1.21ms", "2.50s": three significant digits.
[[nodiscard]] std::string format_duration(std::uint64_t ns);

/// One line (no newline) for the interval that ended at `run_time`: its throughput, latencies
/// and errors (`interval` holds that interval's figures only).
[[nodiscard]] std::string progress_line(std::chrono::nanoseconds run_time, const RunSummary& interval);

/// The final report, several lines each ending in a newline.
[[nodiscard]] std::string final_report(const RunSummary& run);

}  // namespace elfin::loadgen
