// The Zipf sampler by rejection-inversion (see elfin/loadgen/key_chooser.hpp).
#include <elfin/loadgen/key_chooser.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace elfin::loadgen {

namespace {

// log(1 + x) / x and (exp(x) - 1) / x, accurate near 0 (where s is close to 1) by their series.
double log1p_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double expm1_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

}  // namespace

ZipfChooser::ZipfChooser(std::uint64_t n, double s, std::uint64_t seed) : n_(n), s_(s), random_(seed) {
  if (n == 0) throw std::invalid_argument("ZipfChooser: n must be at least 1");
  if (!(s > 0.0)) throw std::invalid_argument("ZipfChooser: the exponent s must be greater than 0");
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
  squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

// H(x) = (x^(1-s) - 1) / (1 - s), written so that s = 1 (where it is log x) needs no special case.
double ZipfChooser::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1.0 - s_) * log_x) * log_x;
}

double ZipfChooser::h(double x) const { return std::exp(-s_ * std::log(x)); }

double ZipfChooser::h_integral_inverse(double x) const {
  double t = x * (1.0 - s_);
  t = std::max(t, -1.0);  // rounding near the edge of the domain
  return std::exp(log1p_over_x(t) * x);
}

std::uint64_t ZipfChooser::next() {
  // Draw u uniformly under the hull's integral between 1.5 - (area of key 1) and n + 0.5, invert it
  // to x, round to the key k; accept when u falls under k's own probability mass. The hull is tight,
  // so few draws are rejected.
  for (;;) {
    const double u = h_integral_n_ + random_.unit() * (h_integral_x1_ - h_integral_n_);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, static_cast<double>(n_));
    if (k - x <= squeeze_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k) - 1;
  }
}

double ZipfChooser::probability(std::uint64_t i) const {
  if (i >= n_) return 0.0;
  if (normaliser_ == 0.0) {
    double sum = 0.0;
    for (std::uint64_t k = n_; k >= 1; --k) sum += h(static_cast<double>(k));  // smallest first
    normaliser_ = sum;
  }
  return h(static_cast<double>(i + 1)) / normaliser_;
}

}  // namespace elfin::loadgen
