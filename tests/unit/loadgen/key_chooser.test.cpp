// The key choosers against their exact distributions: chi-square goodness of fit on seeded draws.
// The seeds are fixed, so each test is deterministic; the thresholds are the chi-square quantiles
// at p = 0.001, so a correct sampler passes with almost any seed and a biased one fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <elfin/loadgen/key_chooser.hpp>

namespace lg = elfin::loadgen;

namespace {

/// Pearson's statistic of `counts` against probabilities `p` over `draws` draws.
double chi_square(const std::vector<std::uint64_t>& counts, const std::vector<double>& p, std::uint64_t draws) {
  double x2 = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double expected = p[i] * static_cast<double>(draws);
    const double d = static_cast<double>(counts[i]) - expected;
    x2 += d * d / expected;
  }
  return x2;
}

/// The chi-square quantile at 1 - 0.001 for `df` degrees of freedom (Wilson–Hilferty), good to a
/// fraction of a percent for df ≥ 30.
double chi_square_critical(double df) {
  const double z = 3.090232;  // the normal's 0.999 quantile
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

}  // namespace

TEST_CASE("zipf chooser draws keys with the Zipf law's exact probabilities", "[loadgen]") {
  const double s = GENERATE(0.5, 0.99, 1.0, 1.2, 2.0);
  constexpr std::uint64_t kKeys = 100;
  constexpr std::uint64_t kDraws = 1'000'000;
  lg::ZipfChooser zipf(kKeys, s, 42);
  std::vector<std::uint64_t> counts(kKeys + 1, 0);  // the last: out of range
  for (std::uint64_t i = 0; i < kDraws; ++i) ++counts[std::min(zipf.next(), kKeys)];
  REQUIRE(counts.back() == 0);
  counts.pop_back();
  std::vector<double> p(kKeys);
  double total = 0;
  for (std::uint64_t i = 0; i < kKeys; ++i) total += p[i] = zipf.probability(i);
  CHECK(total == Approx(1.0));
  // Keys whose expected count is small would dominate the statistic with noise: pool the tail.
  std::vector<std::uint64_t> pooled_counts;
  std::vector<double> pooled_p;
  for (std::uint64_t i = 0; i < kKeys; ++i) {
    if (p[i] * kDraws >= 20 || pooled_p.empty()) {
      pooled_counts.push_back(counts[i]);
      pooled_p.push_back(p[i]);
    } else {
      pooled_counts.back() += counts[i];
      pooled_p.back() += p[i];
    }
  }
  const double x2 = chi_square(pooled_counts, pooled_p, kDraws);
  const double critical = chi_square_critical(static_cast<double>(pooled_p.size() - 1));
  INFO("s = " << s << ": chi-square " << x2 << " over " << pooled_p.size() << " cells, critical " << critical);
  CHECK(x2 < critical);
  // The hottest key: its share within 1% (relative) of 1 / H(n, s).
  CHECK(static_cast<double>(counts[0]) / kDraws == Approx(p[0]).epsilon(0.01));
}

TEST_CASE("zipf chooser works for a million keys and for one", "[loadgen]") {
  lg::ZipfChooser big(1'000'000, 0.99, 7);
  std::uint64_t hot = 0;
  std::uint64_t out_of_range = 0;
  for (int i = 0; i < 200'000; ++i) {
    const auto k = big.next();
    out_of_range += k >= 1'000'000;
    hot += k == 0;
  }
  CHECK(out_of_range == 0);
  CHECK(static_cast<double>(hot) / 200'000 == Approx(big.probability(0)).epsilon(0.05));
  lg::ZipfChooser one(1, 1.0, 7);
  for (int i = 0; i < 100; ++i) CHECK(one.next() == 0);
  CHECK_THROWS_AS(lg::ZipfChooser(0, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(lg::ZipfChooser(10, 0.0, 1), std::invalid_argument);
}

TEST_CASE("zipf chooser gives the same keys for the same seed", "[loadgen]") {
  lg::ZipfChooser a(1000, 0.99, 5);
  lg::ZipfChooser b(1000, 0.99, 5);
  lg::ZipfChooser c(1000, 0.99, 6);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    differ += x != c.next();
  }
  CHECK(differ > 100);
}

TEST_CASE("uniform chooser draws every key equally often", "[loadgen]") {
  constexpr std::uint64_t kKeys = 1000;
  constexpr std::uint64_t kDraws = 2'000'000;
  lg::UniformChooser uniform(kKeys, 9);
  std::vector<std::uint64_t> counts(kKeys, 0);
  for (std::uint64_t i = 0; i < kDraws; ++i) ++counts[uniform.next()];
  const std::vector<double> p(kKeys, 1.0 / kKeys);
  const double x2 = chi_square(counts, p, kDraws);
  INFO("chi-square " << x2);
  CHECK(x2 < chi_square_critical(kKeys - 1));
}
