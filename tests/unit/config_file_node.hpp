// A node for a group's config tests: the configurer as entrypoint (so ValidateConfig reaches the
// group at start and on reload), the group under test, and its config read from a file.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include <elfin/configurer.hpp>
#include <elfin/elfin.hpp>

namespace elfin::test {

inline Topology with_configurer(const std::string& name, Blueprint group) {
  Topology topology;
  topology.local("system.configurers").mount(configurer::blueprint()).entrypoint();
  topology.local(name).mount(std::move(group));
  return topology;
}

/// Two workers and short termination stages, the config from `path`.
inline StartOptions from_config_file(const std::string& path) {
  StartOptions options;
  options.workers = 2;
  options.config_path = path;
  options.terminate_closing_after = std::chrono::milliseconds(1000);
  options.terminate_give_up_after = std::chrono::milliseconds(1000);
  return options;
}

}  // namespace elfin::test
