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
// Next to blueprints it holds node selectors: functions a remote group uses to pick the node for
// each message (`pick = "partitions.peer"` in a topology file's `[[remote]]`), registered by the
// part that defines them because only it knows which field of its messages names the node.
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
#include <elfin/envelope.hpp>
#include <elfin/result.hpp>
#include <elfin/topology_error.hpp>

namespace elfin {

/// Picks the node a message goes to among the connected ones (nullopt: discard it); see
/// network::RemoteGroupOptions::pick. Called from any thread, concurrently: keep it pure.
using NodeSelector =
    std::function<std::optional<std::uint16_t>(const Envelope&, const std::vector<std::uint16_t>& connected)>;

/// A group declared to live on other nodes (`[[remote]]` in a topology file).
struct RemoteGroupDecl {
  std::string name;
  std::vector<std::uint16_t> nodes;
  std::string routing = "unicast";  ///< "unicast" or "broadcast"
  std::string remote_name;          ///< its name on those nodes; empty: `name`
  std::string pick;                 ///< a registered node selector's name; empty: by `routing`
  NodeSelector selector;            ///< the selector `pick` names (null when `pick` is empty)
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

  /// Registers a node selector under `name`; an error if the name is taken or empty.
  Result<void, TopologyError> add_selector(std::string name, NodeSelector selector, std::string description = {});
  /// The selector registered under `name`, or nullptr.
  [[nodiscard]] const NodeSelector* find_selector(std::string_view name) const;
  /// Every selector, sorted by name.
  [[nodiscard]] std::vector<Entry> selectors() const;

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
  struct SelectorItem {
    NodeSelector selector;
    std::string description;
  };
  std::map<std::string, Item, std::less<>> items_;
  std::map<std::string, SelectorItem, std::less<>> selectors_;
  RemoteFactory remote_factory_;
};

}  // namespace elfin
