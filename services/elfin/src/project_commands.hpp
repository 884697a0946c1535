// The commands the `elfin` binary adds to the framework's (cli::main's `commands`): the operator
// tools of the groups this project ships — `shard` (libs/hashing, a running shard manager's map),
// `wal` (libs/wal) and `kv` (the KV service). A user's binary on elfin::cli has none of them, so it
// does not build or link the project's libraries.
#pragma once

#include <vector>

#include <elfin/cli.hpp>

namespace elfin::cli {

[[nodiscard]] std::vector<Command> project_commands();

}  // namespace elfin::cli
