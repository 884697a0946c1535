// Telemetry: metrics of the runtime and of actors, kept where they happen and summed when scraped.
//
// Telemetry is on when the topology has a `system.telemeters` group, which serves the metrics to
// Prometheus. The runtime measures every group (see the guide's "Telemetry" for the list, all named
// `elfin_*` with an `actor_group` label); actors add their own, attributed to their group:
//
//   elfin::metrics::increment_counter("orders_accepted_total");
//   elfin::metrics::set_gauge("queue_depth", static_cast<double>(queue.size()));
//   elfin::metrics::record_histogram("pricing_seconds", elapsed_seconds);
//   elfin::metrics::describe("orders_accepted_total", "Orders taken into the book");  // # HELP
//
// Per group (`[<group>.system.telemetry]`, reloadable):
//
//   [counters.system.telemetry]
//   per_actor_key = false   # true: an `actor_key` label too (one series per actor: mind the cardinality)
//
// Recording never takes a lock shared between threads: each thread writes its own shard (a spin lock
// the scraper takes only while it reads that shard).
//
// Thread safety: the `metrics::` functions from any actor (outside an actor they do nothing);
// `MetricsStorage::snapshot` from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/config.hpp>

namespace elfin::detail {
class GroupRuntime;
}  // namespace elfin::detail

namespace elfin {

/// `system.telemetry` of a group.
struct TelemetryConfig {
  bool per_actor_key = false;
  ELFIN_CONFIG(per_actor_key);
};

namespace metrics {

/// Adds to a counter of the calling actor's group.
void increment_counter(std::string_view name, std::uint64_t by = 1);
/// Sets a gauge of the calling actor's group (the last value set wins).
void set_gauge(std::string_view name, double value);
/// Records a value (seconds, for the built-in buckets) into a histogram of the calling actor's group.
void record_histogram(std::string_view name, double value);
/// Gives the metric family `name` its `# HELP` text on /metrics, from anywhere, for every system of
/// the process (a later call for the same name replaces the text). Every `elfin_*` family the
/// runtime and the batteries record is described by them.
void describe(std::string_view name, std::string_view help);

}  // namespace metrics

namespace telemetry {

enum class MetricKind : std::uint8_t { Counter, Gauge, Histogram };

/// Upper bounds of every histogram's buckets, in seconds: 1 µs to 10 s in 1-2.5-5 steps.
inline constexpr std::array<double, 22> kBuckets{1e-6,   2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                                 5e-4,   1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 1e-1,
                                                 2.5e-1, 5e-1,   1.0,    2.5,  5.0,    10.0};

struct Histogram {
  std::array<std::uint64_t, kBuckets.size() + 1> counts{};  ///< per bucket, the last is +Inf
  std::uint64_t count = 0;
  double sum = 0;
  void record(double value);
  void merge(const Histogram& other);
};

/// One series at scrape time; `name` is the metric family.
struct MetricSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  MetricKind kind = MetricKind::Counter;
  double value = 0;  ///< counter or gauge
  Histogram histogram;
};

/// The `# HELP` text given to `name` by `metrics::describe`, or "" if none.
[[nodiscard]] std::string help_of(std::string_view name);

/// Everything the system of `any_group` measures now: the recorded series plus what is read at
/// scrape time (active actors per status, dump counters, and the series batteries such as the
/// network add through `detail::on_scrape`). Empty without `system.telemeters`.
/// From an actor: `telemetry::scrape(ctx)`, declared with Context.
[[nodiscard]] std::vector<MetricSample> scrape(const elfin::detail::GroupRuntime& any_group);

}  // namespace telemetry
}  // namespace elfin
