// The front's actor (internal).
#pragma once

#include <elfin/actors/kv/config.hpp>
#include <elfin/context.hpp>
#include <elfin/task.hpp>

namespace elfin::actors::kv::internal {

using FrontContext = Context<Config>;

Task<> exec(FrontContext ctx);

}  // namespace elfin::actors::kv::internal
