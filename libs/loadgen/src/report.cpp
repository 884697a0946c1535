// The progress line and the final report (see elfin/loadgen/report.hpp).
#include <elfin/loadgen/report.hpp>

#include <fmt/format.h>

namespace elfin::loadgen {

namespace {

double per_second(std::uint64_t ops, std::chrono::nanoseconds elapsed) {
  if (elapsed.count() <= 0) return 0.0;
  return static_cast<double>(ops) * 1e9 / static_cast<double>(elapsed.count());
}

std::uint64_t error_total(const ErrorCounts& errors) {
  std::uint64_t total = 0;
  for (const auto& [kind, n] : errors) total += n;
  return total;
}

std::string three_digits(double value, const char* unit) {
  if (value >= 100) return fmt::format("{:.0f}{}", value, unit);
  if (value >= 10) return fmt::format("{:.1f}{}", value, unit);
  return fmt::format("{:.2f}{}", value, unit);
}

}  // namespace

std::string format_duration(std::uint64_t ns) {
  const auto v = static_cast<double>(ns);
  if (ns < 1'000) return fmt::format("{}ns", ns);
  if (ns < 1'000'000) return three_digits(v / 1e3, "µs");
  if (ns < 1'000'000'000) return three_digits(v / 1e6, "ms");
  return three_digits(v / 1e9, "s");
}

std::string progress_line(std::chrono::nanoseconds run_time, const RunSummary& interval) {
  const double seconds = std::chrono::duration<double>(run_time).count();
  std::string line = fmt::format("[{:6.1f}s] {:.0f} ops/s", seconds, per_second(interval.ops, interval.elapsed));
  if (interval.latency.count() > 0) {
    line += fmt::format("  p50 {}  p99 {}  p99.9 {}", format_duration(interval.latency.percentile(0.5)),
                        format_duration(interval.latency.percentile(0.99)),
                        format_duration(interval.latency.percentile(0.999)));
  }
  line += fmt::format("  errors {}", error_total(interval.errors));
  return line;
}

std::string final_report(const RunSummary& run) {
  const double seconds = std::chrono::duration<double>(run.elapsed).count();
  std::string out =
      fmt::format("ops        {} in {:.2f}s: {:.0f} ops/s", run.ops, seconds, per_second(run.ops, run.elapsed));
  if (run.target_rate)
    out += fmt::format(" (asked {:.0f}; latency from each operation's intended start)", *run.target_rate);
  out += "\n";
  const LatencyHistogram& h = run.latency;
  if (h.count() > 0) {
    out += fmt::format("latency    p50 {}  p99 {}  p99.9 {}  max {}  mean {}\n", format_duration(h.percentile(0.5)),
                       format_duration(h.percentile(0.99)), format_duration(h.percentile(0.999)),
                       format_duration(h.max()), format_duration(static_cast<std::uint64_t>(h.mean())));
  } else {
    out += "latency    (no operation completed)\n";
  }
  const std::uint64_t errors = error_total(run.errors);
  out += fmt::format("errors     {}", errors);
  if (errors > 0) {
    const char* separator = ": ";
    for (const auto& [kind, n] : run.errors) {
      out += fmt::format("{}{} {}", separator, kind, n);
      separator = ", ";
    }
  }
  out += "\n";
  return out;
}

}  // namespace elfin::loadgen
