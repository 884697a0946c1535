// The network battery: nodes over TCP, so `send`, `request` and `respond` reach actor groups on
// other nodes exactly as local ones.
//
//   topology.local("system.network").mount(elfin::network::blueprint());
//   auto counters = topology.local("counters").mount(elfin::network::remote_group({.nodes = {2}}));
//   clients.route_to(counters, elfin::filters::protocol("counter"));
//
// `system.network` listens, dials the configured peers, authenticates them (see handshake.hpp),
// and keeps one TCP connection per peer, redialing with backoff after a loss. A remote group is a
// local group of forwarders, one per node it lives on: its router picks the node(s), a forwarder
// encodes what it receives (msgpack, named fields) and writes it to that node's connection. The
// receiving node routes the message with the group's own router, exactly as a local send. What
// an elfin::Caller (a thread running no actor) sends to a forwarder is encoded and written by the
// calling thread instead, on a flow the connection keeps for callers (src/direct_sink.hpp).
//
// Flow control: each forwarder may have `kFlowWindow` messages unacknowledged by the receiver,
// which acknowledges a message once it sits in a local mailbox. A slow receiver therefore stops
// the forwarder, whose mailbox fills, so `send` waits and `try_send` reports Full — memory stays
// bounded end to end.
//
// While a node is not connected its forwarders are not routed to: a send to a group that lives
// only there returns NoRoute and a request fails at once. When a connection is lost, the requests
// waiting for an answer over it fail (Failed) and the messages not yet written are dropped (and
// logged); after the node is back, traffic resumes by itself.
//
// Thread safety: blueprints are values; the running battery is driven by its actors and one I/O
// thread per system.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/config.hpp>
#include <elfin/duration.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>

namespace elfin::network {

/// `[system.network]`:
///
///   [system.network]
///   listen = ["tcp://127.0.0.1:9201"]            # where peers connect; port 0 picks a free one
///   discovery.predefined = ["tcp://10.0.0.2:9201"] # peers to dial (and redial)
///   discovery.attempt_interval = "5s"            # longest wait between dial attempts (backoff from 100ms)
///   ping_interval = "5s"                         # a Ping when the connection is otherwise quiet
///   idle_timeout = "30s"                         # close a connection that received nothing that long
///   secret = "..."                               # cluster secret: peers must prove they know it
///   also_accepted_secrets = ["old"]              # accepted from peers during a rotation
///   max_frame_size = "16MiB"                     # larger frames close the connection
struct Discovery {
  std::vector<std::string> predefined;
  std::chrono::milliseconds attempt_interval{5'000};
  ELFIN_CONFIG(predefined, attempt_interval);
};
struct Config {
  std::vector<std::string> listen;
  Discovery discovery;
  std::chrono::milliseconds ping_interval{5'000};
  std::chrono::milliseconds idle_timeout{30'000};
  std::optional<std::string> secret;
  /// Secrets peers may prove instead of `secret` while the cluster rotates it (never sent).
  std::vector<std::string> also_accepted_secrets;
  ByteSize max_frame_size{std::uint64_t{16} * 1024 * 1024};
  ELFIN_CONFIG(listen, discovery, ping_interval, idle_timeout, secret, also_accepted_secrets, max_frame_size);
};

/// Messages a forwarder may have unacknowledged on one connection: what a slow receiver may
/// hold per sending forwarder (so memory is bounded by the window times the message size). A
/// deeper window lets both sides work in bigger batches: two nodes on one 2-core machine moved
/// about 1.0 M small messages/s with 1024 and 1.2 M with 4096 (elfo's window is 100,000).
inline constexpr std::uint32_t kFlowWindow = 4096;

/// A forwarder's mailbox (unless `system.mailbox.capacity` of the remote group says otherwise):
/// room for batches, so senders and forwarders do not wake each other per message.
inline constexpr std::size_t kForwarderMailboxCapacity = 256;

/// How a remote group present on several nodes picks among the connected ones.
enum class Routing : std::uint8_t {
  Unicast,    ///< one node: the first connected one in `nodes` order (the others are standbys)
  Broadcast,  ///< every connected node (a request's `.all()` gets every node's answers)
};

struct RemoteGroupOptions {
  /// Where the group lives.
  std::vector<std::uint16_t> nodes{};
  Routing routing = Routing::Unicast;
  /// The group's name on those nodes; empty: the same as the local name it is mounted on.
  std::string remote_name{};
  /// Optional: picks the node for a message among the connected ones (overrides `routing`);
  /// nullopt discards the message (the send returns NoRoute). It may also pick this node's own
  /// number: the message then goes to the local group `remote_name` (which must differ from the
  /// name the remote group is mounted under), so one group can front a set of nodes that includes
  /// this one — e.g. a sharded group sending each message to the node that owns its shard.
  std::function<std::optional<std::uint16_t>(const Envelope&, const std::vector<std::uint16_t>& connected)> pick{};
};

/// The `system.network` group.
[[nodiscard]] Blueprint blueprint();
/// A group living on other nodes, mounted locally under any name.
[[nodiscard]] Blueprint remote_group(RemoteGroupOptions options);
/// Adds "elfin.network" and the remote-group factory topology files use for `[[remote]]`.
void register_blueprints(BlueprintRegistry& registry);

/// One connected peer.
struct Peer {
  std::uint16_t node_no = 0;
  std::string name;
  std::uint64_t launch_id = 0;
  std::string address;              ///< "127.0.0.1:9201"
  std::vector<std::string> groups;  ///< the peer's local groups
  MSGPACK_DEFINE_MAP(node_no, name, launch_id, address, groups)
};

/// What `system.network` is doing right now.
struct NetworkInfo {
  std::uint16_t node_no = 0;
  std::uint64_t launch_id = 0;
  std::vector<std::string> listening;  ///< bound addresses, "127.0.0.1:9201" (a port 0 resolved)
  std::vector<Peer> peers;             ///< connected (handshake done) peers, by node number
  /// The latest refused connections (wrong secret, version, duplicate node...), oldest first, at
  /// most 16, as logged.
  std::vector<std::string> refusals;
  MSGPACK_DEFINE_MAP(node_no, launch_id, listening, peers, refusals)
};

/// Asks `system.network` what it listens on and who is connected (tests and tools wait on it).
struct GetNetworkInfo {
  ELFIN_REQUEST(elfin_network, GetNetworkInfo, NetworkInfo);
};

}  // namespace elfin::network

ELFIN_EXTERN_MESSAGE(elfin::network::GetNetworkInfo);  // compiled once, in src/network.cpp
