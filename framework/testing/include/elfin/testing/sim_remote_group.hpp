// sim_remote_group: the simulated counterpart of `elfin::network::remote_group` — a local group
// that stands for a group living on other nodes of a SimCluster. Mount it where production mounts
// the network's remote group; the groups that send to it do not change.
//
//   topology.local("peers").mount(elfin::testing::sim_remote_group({
//       .nodes = {1, 2, 3}, .remote_name = "partitions",
//       .pick = [](const elfin::Envelope& e, const std::vector<std::uint16_t>&) { return target_of(e); }}));
//
// Its router picks the node(s) as the network's does: `pick(envelope, connected)` if given (it
// may return this node's own number: the message then goes to the local group `remote_name`
// directly, as with the network), else the first connected node in `nodes` order, or every
// connected one for Broadcast. "Connected" means: up, and the link from this node not cut. What
// reaches the node is delivered to the group `remote_name` there through the simulated network
// (sim_network.hpp); requests get their answers back the same way. A send to an actor address on
// another node (a reply to a remote message's sender) needs no remote group: the cluster gives
// every node direct forwarders for those, as the network battery does.
//
// The blueprint binds to the node whose system the cluster is starting; mounted in a system that
// no SimCluster starts, it throws std::logic_error when the system starts.
//
// Thread safety: blueprints are values; the router runs on the sending node's worker.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <elfin/blueprint.hpp>
#include <elfin/envelope.hpp>

namespace elfin::testing {

enum class SimRouting : std::uint8_t {
  Unicast,    ///< the first connected node in `nodes` order
  Broadcast,  ///< every connected node
};

/// The same fields as `elfin::network::RemoteGroupOptions`, so a topology switches by name.
struct SimRemoteGroupOptions {
  std::vector<std::uint16_t> nodes{};
  SimRouting routing = SimRouting::Unicast;
  /// The group's name on those nodes; empty: the name it is mounted under here.
  std::string remote_name{};
  /// Picks the node for a message among the connected ones (overrides `routing`); nullopt
  /// discards it (the send returns NoRoute). May pick this node itself (see above).
  std::function<std::optional<std::uint16_t>(const Envelope&, const std::vector<std::uint16_t>& connected)> pick{};
};

[[nodiscard]] Blueprint sim_remote_group(SimRemoteGroupOptions options);

}  // namespace elfin::testing
