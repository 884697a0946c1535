// RestartBackoff: the state of one key's restart series — how many quick restarts in a row, and
// the power of the next delay. The supervisor keeps one per actor slot, across restarts.
//
// Thread safety: owned by whoever finishes the actor (its worker); not shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <elfin/restart_policy.hpp>

namespace elfin::detail {

class RestartBackoff {
 public:
  /// The wait before the next start of an actor that lived `lived`, or nullopt once
  /// `max_retries` quick restarts in a row have been spent.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> next(const RestartParams& params,
                                                             std::chrono::nanoseconds lived);
  /// Restarts in the current series (1 for the first restart after a healthy life).
  [[nodiscard]] std::uint64_t attempt() const { return attempt_; }

 private:
  std::uint64_t attempt_ = 0;
  std::uint64_t power_ = 0;
};

}  // namespace elfin::detail
