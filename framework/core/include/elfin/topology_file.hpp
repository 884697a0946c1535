// Topology files: a node described in TOML instead of C++ — its number and name, its groups and
// the blueprint each mounts, the routes between them, its config file, and the groups that live
// on other nodes.
//
//   [node]
//   no = 1                          # 0..65535, part of every trace id and address
//   name = "ping-pong"
//   config = "ping_pong.config.toml" # relative to this file
//
//   [[groups]]
//   name = "pingers"
//   blueprint = "ping_pong.pinger"  # a name in the BlueprintRegistry
//   entrypoint = true               # started first
//
//   [[groups]]
//   name = "pongers"
//   blueprint = "ping_pong.ponger"
//
//   [[routes]]
//   from = "pingers"
//   to = "pongers"
//   messages = ["pingpong.*"]       # "protocol.Name", "protocol.*" or "*"; several allowed
//
//   [[remote]]                      # a group on other nodes, reached through system.network
//   name = "storage"
//   nodes = [2, 3]
//   routing = "unicast"             # first connected node in `nodes` order; or "broadcast"
//   remote_name = "storage"         # its name on those nodes (default: `name`)
//   pick = "storage.owner"          # a node selector registered by name (overrides `routing`)
//
// Loading builds the same `Topology` the C++ API builds (`local`, `route_to`, `mount`,
// `entrypoint`). Every mistake is reported with file and line, all of them at once: unknown
// keys (a typo in a topology changes what runs, so they are errors here, unlike in configs),
// unknown blueprints or node selectors, duplicate groups, routes to unknown groups or to themselves, message
// patterns that name no registered message.
//
// Thread safety: pure functions; the result is a value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/blueprint_registry.hpp>
#include <elfin/result.hpp>
#include <elfin/system.hpp>
#include <elfin/topology.hpp>
#include <elfin/topology_error.hpp>

namespace elfin {

struct TopologyFile {
  std::string source;  ///< the file it was read from
  std::uint16_t node_no = 0;
  std::string node_name;
  std::string config_path;        ///< resolved against the file's directory; "" if the file names none
  std::uint32_t config_line = 0;  ///< where `[node] config` is written
  Topology topology;
  std::vector<RemoteGroupDecl> remote_groups;

  /// StartOptions with this node's number and config file.
  [[nodiscard]] StartOptions start_options() const;
};

/// Parses a topology document; `base_dir` resolves a relative config path.
[[nodiscard]] Result<TopologyFile, TopologyError> parse_topology_file(std::string_view toml, std::string_view source,
                                                                      const BlueprintRegistry& registry,
                                                                      std::string_view base_dir = ".");
/// Reads and parses a topology file.
[[nodiscard]] Result<TopologyFile, TopologyError> load_topology_file(const std::string& path,
                                                                     const BlueprintRegistry& registry);

}  // namespace elfin
