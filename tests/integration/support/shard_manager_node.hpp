// A shard manager node for the sharding integration tests: the topology users run,
// services/shard_manager/manager.toml (node 100: `system.network` and `sharding.manager`), copied
// next to the config a test writes (`manager.config.toml`, which that topology names), and run
// with `elfin run` on a free loopback port. A port another process took meanwhile is replaced by
// a fresh one, so a busy machine never fails the start.
//
// Thread safety: one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "process.hpp"
#include "temp_dir.hpp"

namespace elfin::test {

struct ShardManagerNode {
  Process process;
  std::uint16_t port = 0;  ///< where it listens on 127.0.0.1
};

/// Starts the manager node in `dir` with the config `config(port)` returns; throws when it does
/// not listen within `timeout`.
[[nodiscard]] ShardManagerNode start_shard_manager(const TempDir& dir,
                                                   const std::function<std::string(std::uint16_t port)>& config,
                                                   std::chrono::milliseconds timeout);

}  // namespace elfin::test
