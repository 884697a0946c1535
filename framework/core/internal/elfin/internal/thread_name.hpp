// Thread names: every thread elfin starts names itself, so `top -H`, `perf` and debuggers show
// what each one is (`elfin-worker-0`, `elfin-net-io`, ...) instead of the program's name.
//
// Thread safety: names the calling thread only.
#pragma once

#include <string>

namespace elfin::detail {

/// Names the calling thread (Linux keeps the first 15 bytes); a no-op where unsupported.
void name_this_thread(const std::string& name) noexcept;

}  // namespace elfin::detail
