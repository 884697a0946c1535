// The telemeter's translation of elfin's metric samples into prometheus-cpp metric families.
//
// Samples of one name become one family; histogram buckets become cumulative, as the exposition
// format wants. Separate from the actor so tests can check the translation without HTTP.
//
// Thread safety: pure function.
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include <elfin/telemetry.hpp>

namespace elfin::telemeter {

[[nodiscard]] std::vector<prometheus::MetricFamily> to_families(std::vector<telemetry::MetricSample> samples);

}  // namespace elfin::telemeter
