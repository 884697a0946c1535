#include "observers/runtime_log.hpp"

#include "system/system_core.hpp"

namespace elfin::detail {

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "unknown exception";
}

void write_runtime_log(SystemCore& system, LogLevel level, const ActorMeta& meta, TraceId trace_id, std::string text) {
  system.log_sink().log(level, meta.group, meta.key, trace_id, std::move(text));
}

}  // namespace elfin::detail
