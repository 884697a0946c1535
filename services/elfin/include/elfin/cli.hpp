// The `elfin` command line, as a library: the `elfin` binary is this plus a registry of every
// blueprint the project ships, and a user's own binary gets the same commands for its groups.
//
//   int main(int argc, char** argv) {
//     elfin::BlueprintRegistry registry;
//     elfin::cli::register_framework(registry);          // the batteries (elfin.configurer, ...)
//     std::ignore = registry.add("shop.orders", orders::blueprint());
//     return elfin::cli::main(argc, argv, registry);
//   }
//
// Commands:
//   elfin run <topology.toml> [--config <file>]    start the node; stop on SIGTERM/SIGINT
//   elfin check <topology.toml> [--config <file>] [--strict]
//                                                  validate topology and config, start nothing
//   elfin blueprints                               list the registered blueprints
//   elfin dump [options] FILE...                   read dump files
//   elfin shard [--function F] [--shards N] KEY... print the shard of each key (libs/hashing)
//   elfin wal inspect|verify DIR                   read a WAL directory (libs/wal), change nothing
//   elfin --help | --version
//
// Exit codes: 0 success; 1 invalid topology or config, or the node failed; 2 bad usage.
//
// Thread safety: `main` is called once, from the main thread.
#pragma once

#include <elfin/blueprint_registry.hpp>
#include <elfin/topology_file.hpp>

namespace elfin::cli {

/// Registers the framework's batteries: "elfin.configurer", "elfin.dumper", "elfin.logger",
/// "elfin.telemeter", "elfin.network" and the remote-group factory topology files use for `[[remote]]`.
void register_framework(BlueprintRegistry& registry);

/// Loads a topology file for `run`/`check`: `config_override` (if not empty) replaces the file's
/// config, and a `system.configurers` group (the configurer, entrypoint) is added unless the file
/// declares one. Errors name the file and line.
[[nodiscard]] Result<TopologyFile, TopologyError> load_node(const std::string& topology_path,
                                                            const std::string& config_override,
                                                            const BlueprintRegistry& registry);

/// Runs the command line; returns the process exit code.
[[nodiscard]] int main(int argc, char** argv, const BlueprintRegistry& registry);

}  // namespace elfin::cli
