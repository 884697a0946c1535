// SimRandom: the simulated cluster's source of randomness, a SplitMix64 stream. Every random
// choice of a simulation (link delays, drops, duplicates, the nodes' own seeds, a test's fault
// schedule) is drawn from streams derived from one seed, so a seed names a whole run. Written
// out rather than taken from <random>: the standard distributions may differ between standard
// libraries, and a seed should replay the same run on every machine.
//
// Thread safety: a plain value; one thread at a time.
#pragma once

#include <cstdint>

namespace elfin::testing {

class SimRandom {
 public:
  explicit SimRandom(std::uint64_t seed = 0) : state_(seed) {}

  /// The next 64 random bits.
  [[nodiscard]] std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); 0 when n is 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  /// Uniform in [0, 1).
  [[nodiscard]] double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// True with probability `p` (never for p <= 0, always for p >= 1).
  [[nodiscard]] bool chance(double p) { return p > 0.0 && (p >= 1.0 || unit() < p); }

  /// A seed for another stream, derived from `seed` and two numbers (a node and its incarnation):
  /// streams for different inputs do not overlap in practice.
  [[nodiscard]] static std::uint64_t derive(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    SimRandom r(seed ^ (a * 0xD6E8FEB86659FD93ull) ^ (b * 0xA0761D6478BD642Full));
    return r.next();
  }

 private:
  std::uint64_t state_;
};

}  // namespace elfin::testing
