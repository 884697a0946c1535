// Runtime events (an actor failed, restarting in N s, termination gave up, config warnings), sent to
// the logger group like any actor's record, under the group and key they concern.
#pragma once

#include <exception>
#include <string>

#include <fmt/format.h>

#include <elfin/actor_status.hpp>
#include <elfin/detail/system_hooks.hpp>
#include <elfin/logging.hpp>

namespace elfin::detail {

class SystemCore;

/// What an exception says (its `what()`), for the reason of a failure.
[[nodiscard]] std::string describe_exception(const std::exception_ptr& error);


template <class... Args>
void log_runtime(SystemCore& system, LogLevel level, const ActorMeta& meta, fmt::format_string<Args...> format,
                 Args&&... args) {
  write_runtime_log(system, level, meta, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace elfin::detail
