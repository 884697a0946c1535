// ActorStartInfo: why the current lifecycle of an actor began — a fresh start for its key, or a
// restart by its supervisor under a RestartPolicy (and which attempt of the current series).
//
//   if (ctx.start_info().is_restart()) log("back after failure, attempt {}", ctx.start_info().attempt);
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>

namespace elfin {

enum class ActorStartCause : std::uint8_t {
  Spawned,    ///< the first actor for its key (routing, or the start-up UpdateConfig, started it)
  Restarted,  ///< started again by the supervisor after the previous actor for the key ended
};

struct ActorStartInfo {
  ActorStartCause cause = ActorStartCause::Spawned;
  /// Restarts in the current backoff series: 1 for the first, 0 when not restarted. A life longer
  /// than `auto_reset` starts a new series.
  std::uint64_t attempt = 0;

  [[nodiscard]] bool is_restart() const { return cause == ActorStartCause::Restarted; }
  friend bool operator==(const ActorStartInfo&, const ActorStartInfo&) = default;
};

}  // namespace elfin
