// The configurer (`system.configurers`): loads the node's config file into every group, at start
// and on reload, as elfo's configurer does.
//
//   topology.local("system.configurers").mount(elfin::configurer::blueprint()).entrypoint();
//   elfin::run(std::move(topology), {.config_path = "node.toml"});
//
// Start-up: the system has already checked and applied every group's section (a config that does
// not fit stops the process before any actor runs). The configurer, an entrypoint, then asks every
// group to validate its section (ValidateConfig; groups opt in through their router) and sends
// UpdateConfig to the groups that are not entrypoints, which starts them. A rejection at start-up
// terminates the system as failed (exit code 1).
//
// Reload: `ReloadConfigs` (configurer/protocol.hpp), SIGHUP (changed groups) or SIGUSR2 (forced),
// received through Signal sources. An invalid config is rejected as a whole; the running configs
// stay, and the reason is logged and returned.
//
// Thread safety: a blueprint is a value; the group has one actor.
#pragma once

#include <elfin/blueprint.hpp>
#include <elfin/configurer/protocol.hpp>

namespace elfin::configurer {

/// The configurer group; mount it as `system.configurers` and mark it the entrypoint. It reads
/// the file the system was started from (`StartOptions::config_path`).
[[nodiscard]] Blueprint blueprint();

}  // namespace elfin::configurer
