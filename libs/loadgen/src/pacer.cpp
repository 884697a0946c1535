// The fixed-rate schedule (see elfin/loadgen/pacer.hpp).
#include <elfin/loadgen/pacer.hpp>

#include <cmath>
#include <stdexcept>

namespace elfin::loadgen {

Pacer::Pacer(double rate, Clock::time_point start, std::uint64_t offset, std::uint64_t stride)
    : rate_(rate), start_(start), offset_(offset), stride_(stride) {
  if (!(rate > 0.0)) throw std::invalid_argument("Pacer: the rate must be greater than 0");
  if (stride == 0) throw std::invalid_argument("Pacer: the stride must be at least 1");
}

Pacer::Clock::time_point Pacer::intended(std::uint64_t i) const {
  // From the start each time (not by adding a period per step), so rounding never accumulates.
  const double ns = std::floor(static_cast<double>(i) * 1e9 / rate_);
  return start_ + std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

Pacer::Clock::time_point Pacer::next() { return intended(offset_ + stride_ * issued_++); }

std::uint64_t Pacer::since(Clock::time_point intended, Clock::time_point done) {
  if (done <= intended) return 0;
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(done - intended).count());
}

}  // namespace elfin::loadgen
