// The jump consistent hash: known answers, agreement with the paper's reference implementation
// (written again below in the paper's own shape), and the two properties routing relies on —
// growing the bucket count only moves keys to the new bucket, and buckets fill evenly.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/hashing/jump_hash.hpp>
#include <elfin/hashing/xxh64.hpp>

using elfin::hashing::jump_hash;
using elfin::hashing::xxh64;

namespace {

// Lamping & Veach's listing, transcribed as the paper prints it (int32 bucket count, a 64-bit
// LCG, doubles): the oracle for the library's version.
std::int32_t paper_jump_consistent_hash(std::uint64_t key, std::int32_t num_buckets) {
  std::int64_t b = -1, j = 0;
  while (j < num_buckets) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<std::int64_t>(static_cast<double>(b + 1) *
                                  (static_cast<double>(1LL << 31) / static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<std::int32_t>(b);
}

}  // namespace

TEST_CASE("jump_hash gives the known answers", "[hashing]") {
  // Computed with a separate implementation in Python (its floats are IEEE-754 doubles).
  CHECK(jump_hash(0, 1) == 0);
  CHECK(jump_hash(1, 2) == 0);
  CHECK(jump_hash(1, 1024) == 549);
  CHECK(jump_hash(42, 7) == 2);
  CHECK(jump_hash(123456789, 100) == 34);
  CHECK(jump_hash(0xDEADBEEFULL, 1024) == 285);
  CHECK(jump_hash(0xFFFFFFFFFFFFFFFFULL, 1024) == 313);
  CHECK(jump_hash(0xEF46DB3751D8E999ULL, 1024) == 332);  // xxh64("")
  CHECK(jump_hash(0xEF46DB3751D8E999ULL, 300) == 40);
  CHECK(jump_hash(1, 0x7FFFFFFF) == 262355607);
}

TEST_CASE("jump_hash agrees with the paper's reference implementation", "[hashing]") {
  std::mt19937_64 random(20140606);
  const std::vector<std::uint32_t> counts{1, 2, 3, 7, 10, 100, 300, 1000, 1024, 65536, 0x7FFFFFFF};
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t key = random();
    for (std::uint32_t n : counts) {
      INFO(fmt::format("key {:#x}, {} buckets", key, n));
      REQUIRE(jump_hash(key, n) ==
              static_cast<std::uint32_t>(paper_jump_consistent_hash(key, static_cast<std::int32_t>(n))));
    }
  }
}

TEST_CASE("key 0 lands in bucket 0 for every bucket count", "[hashing]") {
  // The first step takes key 0 to 1, and 2^31 / 1 is beyond any int32 bucket count.
  for (std::uint32_t n : {1u, 2u, 1024u, 0x7FFFFFFFu}) CHECK(jump_hash(0, n) == 0);
}

TEST_CASE("growing from N to N+1 buckets moves keys only to bucket N, about 1/(N+1) of them", "[hashing]") {
  constexpr int kKeys = 100'000;
  std::mt19937_64 random(1406);
  std::vector<std::uint64_t> keys(kKeys);
  for (auto& key : keys) key = xxh64(fmt::format("entity-{}", random()));

  for (std::uint32_t n : {1u, 2u, 9u, 10u, 100u, 299u, 1023u}) {
    int moved = 0;
    for (std::uint64_t key : keys) {
      const std::uint32_t before = jump_hash(key, n);
      const std::uint32_t after = jump_hash(key, n + 1);
      if (after != before) {
        INFO(fmt::format("{} -> {} buckets: a key moved from {} to {}", n, n + 1, before, after));
        REQUIRE(after == n);
        ++moved;
      }
    }
    // Each key moves with probability p = 1/(N+1): a binomial count, within 3 standard deviations.
    const double p = 1.0 / (n + 1);
    const double expected = kKeys * p;
    const double sigma = std::sqrt(kKeys * p * (1 - p));
    INFO(
        fmt::format("{} -> {} buckets: {} keys moved, expected {:.0f} ± {:.0f}", n, n + 1, moved, expected, 3 * sigma));
    CHECK(std::abs(moved - expected) <= 3 * sigma);
  }
}

TEST_CASE("jump-xxh64 fills 10 buckets evenly from 100k keys", "[hashing]") {
  constexpr int kKeys = 100'000;
  constexpr std::uint32_t kBuckets = 10;
  std::vector<int> count(kBuckets);
  for (int i = 0; i < kKeys; ++i) ++count[jump_hash(xxh64(fmt::format("user:{}", i)), kBuckets)];
  // Expected 10,000 each with a standard deviation of about 95: allow 4 of them.
  for (std::uint32_t b = 0; b < kBuckets; ++b) {
    INFO(fmt::format("bucket {} holds {} keys", b, count[b]));
    CHECK(std::abs(count[b] - kKeys / static_cast<int>(kBuckets)) <= 380);
  }
}

TEST_CASE("jump-xxh64 spreads 10^6 keys over 1024 shards uniformly (chi-squared, p > 0.001)", "[hashing]") {
  constexpr int kKeys = 1'000'000;
  constexpr std::uint32_t kShards = 1024;
  std::vector<int> count(kShards);
  std::mt19937_64 random(42);
  std::string key;
  for (int i = 0; i < kKeys; ++i) {
    key = fmt::format("k{:016x}", random());
    ++count[jump_hash(xxh64(key), kShards)];
  }
  const double expected = static_cast<double>(kKeys) / kShards;
  double chi2 = 0;
  for (int c : count) chi2 += (c - expected) * (c - expected) / expected;
  // The chi-squared quantile for p = 0.001 with df = 1023, by Wilson-Hilferty (z = 3.0902): 1168.
  const double df = kShards - 1;
  const double z = 3.0902;
  const double critical = df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
  INFO(fmt::format("chi2 = {:.1f}, critical value {:.1f}", chi2, critical));
  CHECK(chi2 < critical);
}
