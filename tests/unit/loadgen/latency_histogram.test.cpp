// The histogram's buckets and its error bound against exact percentiles of the recorded values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <elfin/loadgen/latency_histogram.hpp>
#include <elfin/loadgen/random.hpp>

namespace lg = elfin::loadgen;

TEST_CASE("histogram buckets tile the values without gaps and are at most 1/128 wide", "[loadgen]") {
  for (std::size_t b = 0; b + 1 < 64 * 128; ++b) {
    const std::uint64_t low = lg::LatencyHistogram::bucket_low(b);
    const std::uint64_t high = lg::LatencyHistogram::bucket_high(b);
    if (high == UINT64_MAX) break;
    REQUIRE(lg::LatencyHistogram::bucket_of(low) == b);
    REQUIRE(lg::LatencyHistogram::bucket_of(high) == b);
    REQUIRE(lg::LatencyHistogram::bucket_low(b + 1) == high + 1);
    REQUIRE(static_cast<double>(high - low + 1) <= std::max(1.0, static_cast<double>(low) / 128.0));
  }
  CHECK(lg::LatencyHistogram::bucket_of(UINT64_MAX) < 64 * 128);
}

TEST_CASE("histogram percentiles are within the stated relative error of the exact ones", "[loadgen]") {
  lg::Random random(11);
  std::vector<std::uint64_t> values;
  lg::LatencyHistogram h;
  for (int i = 0; i < 200'000; ++i) {
    // Log-uniform from 100 ns to 10 s, the span of real latencies.
    const double exponent = 2.0 + random.unit() * 8.0;
    const auto v = static_cast<std::uint64_t>(std::pow(10.0, exponent));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999}) {
    const auto rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * values.size())));
    const double exact = static_cast<double>(values[rank - 1]);
    const double got = static_cast<double>(h.percentile(q));
    INFO("q " << q << ": exact " << exact << ", histogram " << got);
    CHECK(std::abs(got - exact) <= exact * lg::LatencyHistogram::kMaxRelativeError + 1);
  }
  CHECK(h.percentile(1.0) == values.back());
  CHECK(h.max() == values.back());
  CHECK(h.min() == values.front());
  CHECK(h.count() == values.size());
}

TEST_CASE("merged per-thread histograms equal one histogram of everything", "[loadgen]") {
  lg::Random random(3);
  lg::LatencyHistogram all;
  std::vector<lg::LatencyHistogram> parts(4);
  for (int i = 0; i < 40'000; ++i) {
    const std::uint64_t v = random.below(50'000'000);
    all.record(v);
    parts[static_cast<std::size_t>(i) % parts.size()].record(v);
  }
  lg::LatencyHistogram merged;
  for (const auto& p : parts) merged.merge(p);
  CHECK(merged.count() == all.count());
  CHECK(merged.max() == all.max());
  CHECK(merged.min() == all.min());
  CHECK(merged.mean() == Approx(all.mean()));
  for (double q : {0.5, 0.99, 0.999}) CHECK(merged.percentile(q) == all.percentile(q));
  merged.clear();
  CHECK(merged.count() == 0);
  CHECK(merged.percentile(0.5) == 0);
}
