// Random: the load generator's seeded source of randomness, a SplitMix64 stream. Written out
// rather than taken from <random>: the standard distributions differ between standard libraries,
// and a seed should give the same keys on every machine.
//
// Thread safety: a plain value; one thread at a time (give each worker its own, seeded apart).
#pragma once

#include <cstdint>

namespace elfin::loadgen {

// 128-bit products (a GCC/clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ typedef unsigned __int128 Uint128;  // NOLINT(modernize-use-using)

class Random {
 public:
  explicit Random(std::uint64_t seed = 0) : state_(seed) {}

  /// The next 64 random bits.
  [[nodiscard]] std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  [[nodiscard]] double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n) without modulo bias (Lemire's multiply-and-reject); 0 when n is 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    Uint128 m = static_cast<Uint128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Uint128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace elfin::loadgen
