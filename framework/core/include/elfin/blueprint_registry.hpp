// BlueprintRegistry: blueprints by name, so a topology file can say which code a group runs.
//
//   elfin::BlueprintRegistry registry;
//   registry.add("counter.counters", counters(), "counts Increments");
//   auto file = elfin::load_topology_file("node.toml", registry);
//
// A registry is a value the binary builds (no global one): the `elfin` command registers the
// framework's batteries, the actor groups of `actors/` and the examples; a user's own binary
// registers its groups and hands the registry to `elfin::cli::main` for the same command line.
// Names are free-form; by convention `<part>.<group>` ("elfin.configurer", "ping_pong.pinger").
//
// Thread safety: fill it on one thread, then read it from any.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/blueprint.hpp>
#include <elfin/result.hpp>
#include <elfin/topology_error.hpp>

namespace elfin {

/// A group declared to live on other nodes (`[[remote]]` in a topology file).
struct RemoteGroupDecl {
  std::string name;
  std::vector<std::uint16_t> nodes;
  std::string routing = "unicast";  ///< "unicast" or "broadcast"
};

class BlueprintRegistry {
 public:
  struct Entry {
    std::string name;
    std::string description;
  };

  /// Registers `blueprint` under `name`; an error if the name is taken or empty.
  Result<void, TopologyError> add(std::string name, Blueprint blueprint, std::string description = {});
  /// The blueprint registered under `name`, or nullptr.
  [[nodiscard]] const Blueprint* find(std::string_view name) const;
  /// Every entry, sorted by name.
  [[nodiscard]] std::vector<Entry> entries() const;

  /// Makes the blueprint of a `[[remote]]` group; the network battery registers it.
  using RemoteFactory = std::function<Blueprint(const RemoteGroupDecl&)>;
  void set_remote_factory(RemoteFactory factory) { remote_factory_ = std::move(factory); }
  /// Null when no network battery is registered.
  [[nodiscard]] const RemoteFactory* remote_factory() const { return remote_factory_ ? &remote_factory_ : nullptr; }

 private:
  struct Item {
    Blueprint blueprint;
    std::string description;
  };
  std::map<std::string, Item, std::less<>> items_;
  RemoteFactory remote_factory_;
};

}  // namespace elfin
