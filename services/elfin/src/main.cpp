// The `elfin` command: the CLI library with every blueprint this project ships registered —
// the framework's batteries, the actor groups of actors/, and, when built, the examples' groups.
#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/cli.hpp>

#ifdef ELFIN_WITH_EXAMPLES
#include "ping_pong.hpp"
#include "remote_counter.hpp"
#endif

int main(int argc, char** argv) {
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);
  elfin::actors::shard_manager::register_blueprints(registry);
  elfin::actors::sharding::register_blueprints(registry);
#ifdef ELFIN_WITH_EXAMPLES
  ping_pong::register_blueprints(registry);
  remote_counter::register_blueprints(registry);
#endif
  return elfin::cli::main(argc, argv, registry);
}
