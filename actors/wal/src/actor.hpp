// The WAL actor's exec (one per WAL id): see elfin/actors/wal.hpp for what it guarantees and
// actor.cpp for how.
#pragma once

#include <cstdint>

#include <elfin/actors/wal.hpp>
#include <elfin/actors/wal/config.hpp>
#include <elfin/context.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>

namespace elfin::actors::wal::internal {

using WalContext = Context<Config, std::uint32_t>;

Task<Result<void, std::string>> exec(WalContext ctx, FileSystemFactory file_system);

}  // namespace elfin::actors::wal::internal
