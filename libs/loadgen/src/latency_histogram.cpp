// Log-linear latency buckets (see elfin/loadgen/latency_histogram.hpp).
#include <elfin/loadgen/latency_histogram.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace elfin::loadgen {

namespace {

constexpr std::uint64_t kSub = std::uint64_t{1} << LatencyHistogram::kSubBucketBits;  // buckets per power of two
// Values below kSub: one bucket each; then groups 1..(64 - bits) of kSub buckets.
constexpr std::size_t kBuckets = kSub + (64 - LatencyHistogram::kSubBucketBits) * kSub;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

std::size_t LatencyHistogram::bucket_of(std::uint64_t ns) {
  if (ns < kSub) return static_cast<std::size_t>(ns);
  const unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(ns));  // ≥ kSubBucketBits
  const unsigned group = msb - kSubBucketBits + 1;
  const std::uint64_t mantissa = (ns >> (msb - kSubBucketBits)) - kSub;  // the bits after the leading one
  return static_cast<std::size_t>(group * kSub + mantissa);
}

std::uint64_t LatencyHistogram::bucket_low(std::size_t bucket) {
  if (bucket < kSub) return bucket;
  const std::uint64_t group = bucket / kSub;
  const std::uint64_t mantissa = bucket % kSub;
  return (kSub + mantissa) << (group - 1);
}

std::uint64_t LatencyHistogram::bucket_high(std::size_t bucket) {
  if (bucket < kSub) return bucket;
  const std::uint64_t group = bucket / kSub;
  return bucket_low(bucket) + ((std::uint64_t{1} << (group - 1)) - 1);
}

void LatencyHistogram::record(std::uint64_t ns, std::uint64_t count) {
  if (count == 0) return;
  counts_[bucket_of(ns)] += count;
  count_ += count;
  max_ = std::max(max_, ns);
  min_ = std::min(min_, ns);
  sum_ += static_cast<long double>(ns) * static_cast<long double>(count);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
  sum_ += other.sum_;
}

void LatencyHistogram::clear() { *this = LatencyHistogram{}; }

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(count_));
}

std::uint64_t LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return 0;
  if (q >= 1.0) return max_;
  q = std::max(q, 0.0);
  // The rank of the value (1-based, as "the smallest value with at least q of the counts at or
  // below it").
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const std::uint64_t low = bucket_low(b);
      const std::uint64_t mid = low + (bucket_high(b) - low) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace elfin::loadgen
