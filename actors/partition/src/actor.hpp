// The partition actor's exec (one per partition id): see elfin/actors/partition.hpp for what it
// guarantees and actor.cpp for how.
#pragma once

#include <cstdint>

#include <elfin/actors/partition.hpp>
#include <elfin/actors/partition/config.hpp>
#include <elfin/context.hpp>
#include <elfin/task.hpp>

namespace elfin::actors::partition::internal {

using PartitionContext = Context<Config, std::uint64_t>;

Task<> exec(PartitionContext ctx, StateMachineFactory state_machine);

}  // namespace elfin::actors::partition::internal
