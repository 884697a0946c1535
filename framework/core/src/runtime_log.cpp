#include "runtime_log.hpp"

#include "system_core.hpp"

namespace elfin::detail {

void write_runtime_log(SystemCore& system, LogLevel level, const ActorMeta& meta, std::string text) {
  system.log(level, meta.group, meta.key, TraceId{}, std::move(text));
}

}  // namespace elfin::detail
