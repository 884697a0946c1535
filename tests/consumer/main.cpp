// The shop's binary: elfin's commands (run, check, dump, ...) for topology files naming its groups.
#include <tuple>

#include <elfin/cli.hpp>

#include "orders.hpp"

int main(int argc, char** argv) {
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);
  std::ignore = registry.add("shop.orders", shop::orders(), "takes orders, one actor per item");
  return elfin::cli::main(argc, argv, registry);
}
