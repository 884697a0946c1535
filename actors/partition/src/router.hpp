// The partition group's router: every protocols/raft message goes to the actor of its
// `partition` (created by the first one).
#pragma once

#include <cstdint>

#include <elfin/map_router.hpp>

namespace elfin::actors::partition::internal {

[[nodiscard]] MapRouter<std::uint64_t> router();

}  // namespace elfin::actors::partition::internal
