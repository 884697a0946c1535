#include <elfin/restart_policy.hpp>

#include <cmath>

#include <elfin/detail/restart_backoff.hpp>

namespace elfin {

std::chrono::nanoseconds RestartParams::delay(std::uint64_t power) const {
  // Computed in double nanoseconds: factor^power overflows any integer type long before it
  // overflows a double, and then (or for a NaN factor) the cap applies.
  const double raw = static_cast<double>(min_backoff_.count()) * std::pow(factor_, static_cast<double>(power));
  const auto cap = static_cast<double>(max_backoff_.count());
  if (!std::isfinite(raw) || raw >= cap) return max_backoff_;
  return std::chrono::nanoseconds{static_cast<std::int64_t>(raw)};
}

}  // namespace elfin

namespace elfin::detail {

std::optional<std::chrono::nanoseconds> RestartBackoff::next(const RestartParams& params,
                                                             std::chrono::nanoseconds lived) {
  if (lived >= params.auto_reset()) {
    // A healthy life: start again at once, as the first retry of a new series.
    attempt_ = 1;
    power_ = 0;
    return std::chrono::nanoseconds::zero();
  }
  if (attempt_ >= params.max_retries()) return std::nullopt;
  ++attempt_;
  return params.delay(power_++);
}

}  // namespace elfin::detail
