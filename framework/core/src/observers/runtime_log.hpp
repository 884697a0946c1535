// Runtime events (an actor failed, restarting in N s, termination gave up, config warnings), sent to
// the logger group like any actor's record, under the group and key they concern, and skipped
// above that group's `system.logging.max_level` as its actors' records are.
#pragma once

#include <exception>
#include <string>

#include <fmt/format.h>

#include <elfin/actor_status.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/logging.hpp>

namespace elfin::detail {

class SystemCore;

/// What an exception says (its `what()`), for the reason of a failure.
[[nodiscard]] std::string describe_exception(const std::exception_ptr& error);

template <class... Args>
void log_runtime(SystemCore& system, LogLevel level, const ActorMeta& meta, fmt::format_string<Args...> format,
                 Args&&... args) {
  write_runtime_log(system, level, meta, TraceId{}, fmt::format(format, std::forward<Args>(args)...));
}
/// About one actor: under its group and key, with the trace id of the message it was handling
/// (so `elfin dump --trace` and the log tell one story of a crashed request).
template <class... Args>
void log_runtime(SystemCore& system, LogLevel level, const ActorCell& cell, fmt::format_string<Args...> format,
                 Args&&... args) {
  write_runtime_log(system, level, cell.meta(), cell.trace_id(), fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace elfin::detail
