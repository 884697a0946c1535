#include "observers/runtime_log.hpp"

#include <elfin/detail/group_runtime.hpp>

#include "system/system_core.hpp"

namespace elfin::detail {

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    // Not a std::exception: there is no message to show.
    return "unknown exception";
  }
}

void write_runtime_log(SystemCore& system, LogLevel level, const ActorMeta& meta, TraceId trace_id, std::string text) {
  // A group's `system.logging.max_level` is about everything logged under its name, the runtime's
  // records about it (restarts, a battery's connection events) as much as its actors' own. The
  // lookup is a scan of the fixed group list: runtime records are rare.
  if (GroupRuntime* group = system.find_group(meta.group); group != nullptr && !group->logging().enabled(level)) return;
  system.log_sink().log(level, meta.group, meta.key, trace_id, std::move(text));
}

}  // namespace elfin::detail
