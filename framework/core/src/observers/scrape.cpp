// The metrics scrape: the telemetry battery's per-actor series from the metrics storage, plus the
// runtime's own gauges and counters read at scrape time (actors by status, restarts, log and dump
// counters) and the batteries' collectors.
#include <elfin/telemetry.hpp>

#include <elfin/detail/group_runtime.hpp>
#include <elfin/internal/dump_storage.hpp>

#include "observers/metrics_storage.hpp"
#include "supervision/group_restarts.hpp"
#include "system/system_core.hpp"

namespace elfin::telemetry {

std::vector<MetricSample> scrape(const detail::GroupRuntime& any_group) {
  const detail::SystemCore& system = any_group.system();
  if (system.metrics() == nullptr) return {};
  auto samples = system.metrics()->snapshot();
  auto gauge = [&](std::string name, std::vector<std::pair<std::string, std::string>> labels, double value) {
    MetricSample sample;
    sample.name = std::move(name);
    sample.labels = std::move(labels);
    sample.kind = MetricKind::Gauge;
    sample.value = value;
    samples.push_back(std::move(sample));
  };
  auto counter = [&](std::string name, double value) {
    gauge(std::move(name), {}, value);
    samples.back().kind = MetricKind::Counter;
  };
  for (const auto& g : system.groups()) {
    auto by_status = g->telemetry().actors_by_status();
    for (std::size_t i = 0; i < by_status.size(); ++i) {
      auto kind = static_cast<ActorStatusKind>(i);
      if (kind == ActorStatusKind::Terminated || kind == ActorStatusKind::Failed) continue;  // gone
      gauge("elfin_active_actors", {{"actor_group", g->name()}, {"status", std::string{to_string(kind)}}},
            static_cast<double>(by_status[i]));
    }
    gauge("elfin_restarting_actors", {{"actor_group", g->name()}}, static_cast<double>(g->restarting_actors()));
    gauge("elfin_restarts_total", {{"actor_group", g->name()}}, static_cast<double>(g->restarts().count()));
    samples.back().kind = MetricKind::Counter;
  }
  const auto logs = system.log_sink().counters();
  for (std::size_t i = 0; i < kLogLevels; ++i) {
    const std::string level{to_string(static_cast<LogLevel>(i))};
    for (auto [name, values] :
         {std::pair{"elfin_emitted_events_total", &logs.emitted},
          std::pair{"elfin_limited_events_total", &logs.limited}, std::pair{"elfin_lost_events_total", &logs.lost}}) {
      gauge(name, {{"level", level}}, static_cast<double>((*values)[i]));
      samples.back().kind = MetricKind::Counter;
    }
  }
  if (const auto* dumps = system.dump_storage()) {
    auto c = dumps->counters();
    counter("elfin_emitted_dumps_total", static_cast<double>(c.emitted));
    counter("elfin_limited_dumps_total", static_cast<double>(c.limited));
    counter("elfin_lost_dumps_total", static_cast<double>(c.lost));
  }
  // Batteries' series (the network's per-peer traffic): read at scrape time, like the above.
  for (const auto& collect : system.extensions().scrape_collectors()) collect(samples);
  return samples;
}

}  // namespace elfin::telemetry
