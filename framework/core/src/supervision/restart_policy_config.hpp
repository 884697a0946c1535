// The `[<group>.system.restart_policy]` table of a group's config: the middle level of restart
// policy precedence (above the blueprint's, below `ctx.set_restart_policy`).
//
//   [workers.system.restart_policy]
//   when = "OnFailure"        # "Always" | "OnFailure" | "Never"; required
//   min_backoff = "5s"        # required unless when = "Never"
//   max_backoff = "30s"       # required unless when = "Never"
//   factor = 2.0              # optional (the book's "2.0" string is accepted too)
//   max_retries = 20          # optional, default: no limit
//   auto_reset = "5s"         # optional, default: min_backoff
#pragma once

#include <optional>
#include <string>

#include <elfin/config.hpp>
#include <elfin/config_error.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

/// The policy the group's config section sets, nullopt if it sets none; the error names the key.
[[nodiscard]] Result<std::optional<RestartPolicy>, ConfigError> decode_restart_policy(const AnyConfig& group_section);

}  // namespace elfin::detail
