// LatencyHistogram: latencies in nanoseconds counted in log-linear buckets, as HdrHistogram does:
// values below 2^7 have a bucket each; above, every power of two is split into 2^7 equal buckets.
// A bucket is never wider than 1/128 of the values in it, and a percentile is reported as its
// bucket's midpoint, so any percentile is within 1/256 (0.4%) of a recorded value's true rank
// value; the maximum and minimum are kept exactly. Recording is an index computation and an
// increment: no allocation, no lock.
//
// Each worker records into its own histogram; the report merges them (`merge`), which is exact.
//
//   LatencyHistogram h;
//   h.record(latency_ns);
//   total.merge(h);
//   total.percentile(0.99);   // ns
//
// Thread safety: one thread at a time per histogram.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace elfin::loadgen {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  /// The largest relative error of a reported percentile (half a bucket).
  static constexpr double kMaxRelativeError = 1.0 / (2 << kSubBucketBits);

  LatencyHistogram();

  void record(std::uint64_t ns) { record(ns, 1); }
  void record(std::uint64_t ns, std::uint64_t count);
  /// Adds every count of `other`.
  void merge(const LatencyHistogram& other);
  void clear();

  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] std::uint64_t max() const { return max_; }
  [[nodiscard]] std::uint64_t min() const { return count_ == 0 ? 0 : min_; }
  [[nodiscard]] double mean() const;
  /// The value at quantile `q` in [0, 1] (0.5: the median, 0.999: p99.9); 0 when empty. q = 1 is
  /// the exact maximum.
  [[nodiscard]] std::uint64_t percentile(double q) const;

  /// The bucket a value falls in, and the values a bucket holds (for tests).
  [[nodiscard]] static std::size_t bucket_of(std::uint64_t ns);
  [[nodiscard]] static std::uint64_t bucket_low(std::size_t bucket);
  [[nodiscard]] static std::uint64_t bucket_high(std::size_t bucket);  ///< inclusive

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  long double sum_ = 0;
};

}  // namespace elfin::loadgen
