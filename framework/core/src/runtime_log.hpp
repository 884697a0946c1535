// Runtime events (an actor failed, termination gave up) written to stderr until the logger
// battery (system.loggers) takes them over.
#pragma once

#include <string>

#include <fmt/format.h>

#include <elfin/actor_status.hpp>

namespace elfin::detail {

enum class LogLevel : unsigned char { Error, Warn, Info };

void write_runtime_log(LogLevel level, const ActorMeta& meta, const std::string& text);

template <class... Args>
void log_runtime(LogLevel level, const ActorMeta& meta, fmt::format_string<Args...> format, Args&&... args) {
  write_runtime_log(level, meta, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace elfin::detail
