#include <elfin/telemeter/prometheus_text.hpp>

#include <algorithm>
#include <map>

namespace elfin::telemeter {

std::vector<prometheus::MetricFamily> to_families(std::vector<telemetry::MetricSample> samples) {
  std::map<std::string, prometheus::MetricFamily> families;  // sorted by name: stable output
  for (auto& sample : samples) {
    auto& family = families[sample.name];
    if (family.name.empty()) {
      family.name = sample.name;
      family.help = telemetry::help_of(sample.name);
      switch (sample.kind) {
        case telemetry::MetricKind::Counter:
          family.type = prometheus::MetricType::Counter;
          break;
        case telemetry::MetricKind::Gauge:
          family.type = prometheus::MetricType::Gauge;
          break;
        case telemetry::MetricKind::Histogram:
          family.type = prometheus::MetricType::Histogram;
          break;
      }
    }
    prometheus::ClientMetric metric;
    for (auto& [name, value] : sample.labels) metric.label.push_back({name, value});
    std::sort(metric.label.begin(), metric.label.end());
    switch (sample.kind) {
      case telemetry::MetricKind::Counter:
        metric.counter.value = sample.value;
        break;
      case telemetry::MetricKind::Gauge:
        metric.gauge.value = sample.value;
        break;
      case telemetry::MetricKind::Histogram: {
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < telemetry::kBuckets.size(); ++i) {
          cumulative += sample.histogram.counts[i];
          metric.histogram.bucket.push_back({cumulative, telemetry::kBuckets[i]});
        }
        metric.histogram.bucket.push_back({sample.histogram.count, std::numeric_limits<double>::infinity()});
        metric.histogram.sample_count = sample.histogram.count;
        metric.histogram.sample_sum = sample.histogram.sum;
        break;
      }
    }
    family.metric.push_back(std::move(metric));
  }
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families.size());
  for (auto& [name, family] : families) out.push_back(std::move(family));
  return out;
}

}  // namespace elfin::telemeter
