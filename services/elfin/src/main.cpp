// The `elfin` command: the CLI library with every blueprint this project ships registered — the
// framework's batteries and the actor groups of actors/ (the examples have their own binary,
// examples/demo) — and the project's commands (shard, wal, kv).
#include <elfin/actors/kv.hpp>
#include <elfin/actors/partition.hpp>
#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/cli.hpp>

#include "project_commands.hpp"

int main(int argc, char** argv) {
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);
  elfin::actors::shard_manager::register_blueprints(registry);
  elfin::actors::sharding::register_blueprints(registry);
  elfin::actors::wal::register_blueprints(registry);
  elfin::actors::partition::register_blueprints(registry);
  elfin::actors::kv::register_blueprints(registry);
  return elfin::cli::main(argc, argv, registry, elfin::cli::project_commands());
}
