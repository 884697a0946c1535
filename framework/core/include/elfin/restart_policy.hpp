// RestartPolicy: whether an actor whose exec ended is started again for the same key, and how
// long its supervisor waits before doing so.
//
//   RestartPolicy::never()           (default) never; a later message may still start a new actor
//   RestartPolicy::on_failure(p)     after a failure (exception or error result)
//   RestartPolicy::always(p)         after a failure and after a normal return
//
// Repeated restarts back off: `delay = min(min_backoff * factor^power, max_backoff)`, power
// counting from 0. An actor that lived `auto_reset` (default: min_backoff) before ending is deemed
// healthy: it is restarted at once and the series starts over. After `max_retries` quick
// restarts in a row the actor stays down.
//
// Precedence: `ctx.set_restart_policy(p)` (this lifecycle only) > the group's config
// `[<group>.system.restart_policy]` > the blueprint's `.restart_policy(p)`.
//
// Thread safety: value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

namespace elfin {

class RestartParams {
 public:
  /// Both bounds are required, as in the book; the rest has defaults.
  RestartParams(std::chrono::nanoseconds min_backoff, std::chrono::nanoseconds max_backoff)
      : min_backoff_(min_backoff), max_backoff_(max_backoff), auto_reset_(min_backoff) {}

  /// The multiplier per quick restart (default 2.0).
  [[nodiscard]] RestartParams factor(double factor) const {
    RestartParams copy = *this;
    copy.factor_ = factor;
    return copy;
  }
  /// How many quick restarts in a row are tried before the actor stays down (default: no limit).
  [[nodiscard]] RestartParams max_retries(std::uint64_t retries) const {
    RestartParams copy = *this;
    copy.max_retries_ = retries;
    return copy;
  }
  /// How long an actor must live to reset the backoff (default: min_backoff).
  [[nodiscard]] RestartParams auto_reset(std::chrono::nanoseconds lived) const {
    RestartParams copy = *this;
    copy.auto_reset_ = lived;
    return copy;
  }

  [[nodiscard]] std::chrono::nanoseconds min_backoff() const { return min_backoff_; }
  [[nodiscard]] std::chrono::nanoseconds max_backoff() const { return max_backoff_; }
  [[nodiscard]] double factor() const { return factor_; }
  [[nodiscard]] std::uint64_t max_retries() const { return max_retries_; }
  [[nodiscard]] std::chrono::nanoseconds auto_reset() const { return auto_reset_; }

  /// The book's formula: `min(min_backoff * factor^power, max_backoff)`.
  [[nodiscard]] std::chrono::nanoseconds delay(std::uint64_t power) const;

  friend bool operator==(const RestartParams&, const RestartParams&) = default;

 private:
  std::chrono::nanoseconds min_backoff_;
  std::chrono::nanoseconds max_backoff_;
  double factor_ = 2.0;
  std::uint64_t max_retries_ = std::numeric_limits<std::uint64_t>::max();
  std::chrono::nanoseconds auto_reset_;
};

class RestartPolicy {
 public:
  enum class When : std::uint8_t { Never, OnFailure, Always };

  [[nodiscard]] static RestartPolicy never() { return RestartPolicy{When::Never, std::nullopt}; }
  [[nodiscard]] static RestartPolicy on_failure(RestartParams params) { return RestartPolicy{When::OnFailure, params}; }
  [[nodiscard]] static RestartPolicy always(RestartParams params) { return RestartPolicy{When::Always, params}; }

  [[nodiscard]] When when() const { return when_; }
  /// The backoff parameters; empty for `never()`.
  [[nodiscard]] const std::optional<RestartParams>& params() const { return params_; }
  /// Whether an actor that ended this way is restarted under this policy.
  [[nodiscard]] bool restarts(bool failed) const {
    return when_ == When::Always || (when_ == When::OnFailure && failed);
  }

  friend bool operator==(const RestartPolicy&, const RestartPolicy&) = default;

 private:
  RestartPolicy(When when, std::optional<RestartParams> params) : when_(when), params_(params) {}
  When when_;
  std::optional<RestartParams> params_;
};

}  // namespace elfin
