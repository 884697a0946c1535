// The `elfin` command line, as a library: a user's own binary gets the framework's commands for
// its groups, and may add commands of its own. The `elfin` binary is this plus a registry of every
// blueprint the project ships and the project's commands (`shard`, `wal`, `kv`).
//
//   int main(int argc, char** argv) {
//     elfin::BlueprintRegistry registry;
//     elfin::cli::register_framework(registry);          // the batteries (elfin.configurer, ...)
//     std::ignore = registry.add("shop.orders", orders::blueprint());
//     return elfin::cli::main(argc, argv, registry);
//   }
//
// Commands (the binary names itself in help and errors):
//   <binary> run <topology.toml> [--config <file>]    start the node; stop on SIGTERM/SIGINT
//   <binary> check <topology.toml> [--config <file>] [--strict]
//                                                     validate topology and config, start nothing
//   <binary> blueprints                               list the registered blueprints
//   <binary> dump [options] FILE...                   read dump files
//   <binary> --help | --version
//
// Exit codes: 0 success; 1 invalid topology or config, or the node failed; 2 bad usage.
//
// Thread safety: `main` is called once, from the main thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

/// A command a binary adds to the framework's own.
struct Command {
  std::string name;
  /// Its entry in the help: "  name ARGS\n        What it does.\n" lines; `{0}` is the binary's name.
  std::string help;
  /// Runs it with the arguments after its name; returns the process exit code.
  std::function<int(const std::vector<std::string_view>& args)> run;
};

/// Runs the command line; returns the process exit code. `commands` come after the framework's
/// (a name the framework uses is never looked up in them).
[[nodiscard]] int main(int argc, char** argv, const BlueprintRegistry& registry,
                       const std::vector<Command>& commands = {});

}  // namespace elfin::cli
