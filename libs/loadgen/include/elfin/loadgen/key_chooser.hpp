// Key choosers: which of `n` keys the next operation touches, as an index in [0, n).
//
//   UniformChooser  every key equally likely
//   ZipfChooser     key i (0-based) with probability proportional to 1 / (i + 1)^s: a few hot
//                   keys and a long tail, as real workloads have (YCSB's default is s = 0.99)
//
// The Zipf sampler is rejection-inversion (Hörmann & Derflinger, 1996): it inverts the integral of
// x^-s, a continuous hull of the probabilities, and accepts or rejects one candidate, so a draw
// costs O(1) expected (a couple of exp/log) with no table of n entries, and it is exact: the
// probabilities are those of the Zipf law, not an approximation. Any s > 0 works, s = 1 included.
// Key 0 is the hottest; a benchmark that wants hot keys spread over shards maps indexes through a
// hash.
//
// Thread safety: a chooser holds its random stream; one thread at a time (one per worker, seeds
// apart).
#pragma once

#include <cstdint>

#include <elfin/loadgen/random.hpp>

namespace elfin::loadgen {

class UniformChooser {
 public:
  UniformChooser(std::uint64_t n, std::uint64_t seed) : n_(n), random_(seed) {}
  [[nodiscard]] std::uint64_t next() { return random_.below(n_); }
  [[nodiscard]] std::uint64_t size() const { return n_; }

 private:
  std::uint64_t n_;
  Random random_;
};

class ZipfChooser {
 public:
  /// `n` ≥ 1 keys, exponent `s` > 0 (throws std::invalid_argument otherwise).
  ZipfChooser(std::uint64_t n, double s, std::uint64_t seed);
  [[nodiscard]] std::uint64_t next();
  [[nodiscard]] std::uint64_t size() const { return n_; }
  [[nodiscard]] double exponent() const { return s_; }
  /// The exact probability of key `i` (for tests and reports): (i+1)^-s / Σ k^-s.
  [[nodiscard]] double probability(std::uint64_t i) const;

 private:
  [[nodiscard]] double h(double x) const;           // x^-s
  [[nodiscard]] double h_integral(double x) const;  // ∫ x^-s, shifted so that it is 0 at 1
  [[nodiscard]] double h_integral_inverse(double x) const;

  std::uint64_t n_;
  double s_;
  Random random_;
  double h_integral_x1_ = 0;       // H(1.5) - 1
  double h_integral_n_ = 0;        // H(n + 0.5)
  double squeeze_ = 0;             // accept at once when k - x ≤ this
  mutable double normaliser_ = 0;  // Σ k^-s, computed by the first probability()
};

}  // namespace elfin::loadgen
