#include "runtime_log.hpp"

#include <chrono>
#include <cstdio>

#include <fmt/chrono.h>

namespace elfin::detail {

void write_runtime_log(LogLevel level, const ActorMeta& meta, const std::string& text) {
  static constexpr const char* kNames[] = {"ERROR", "WARN", "INFO"};
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  // One fprintf per line keeps concurrent lines whole (stdio locks the stream per call).
  std::string line =
      fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z {} {}/{} - {}\n", fmt::gmtime(std::chrono::system_clock::to_time_t(now)),
                  ms.count(), kNames[static_cast<int>(level)], meta.group, meta.key, text);
  std::fputs(line.c_str(), stderr);
}

}  // namespace elfin::detail
