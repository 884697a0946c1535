// stock: the stock service's binary. elfin's commands (run, check, dump, blueprints, ...) with
// the framework's batteries and the service's own groups registered:
//
//   ./build/examples/stock/stock run examples/stock/stock.toml
// ANCHOR: main
#include <elfin/cli.hpp>

#include "stock.hpp"

int main(int argc, char** argv) {
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);  // elfin.network, elfin.dumper, elfin.telemeter, ...
  stock::register_blueprints(registry);
  return elfin::cli::main(argc, argv, registry);
}
// ANCHOR_END: main
