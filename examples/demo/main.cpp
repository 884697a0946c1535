// elfin-demo: elfin's commands (run, check, dump, ...) with the examples' groups registered, so
// their topology files run as any service's would:
//
//   ./build/examples/demo/elfin-demo run examples/ping_pong/topology.toml
//   ./build/examples/demo/elfin-demo run examples/remote_counter/server.toml
//
// It is also the smallest service binary: a registry, the framework's batteries, its own groups,
// and elfin::cli::main.
#include <elfin/cli.hpp>

#include "ping_pong.hpp"
#include "remote_counter.hpp"

int main(int argc, char** argv) {
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);
  ping_pong::register_blueprints(registry);
  remote_counter::register_blueprints(registry);
  return elfin::cli::main(argc, argv, registry);
}
