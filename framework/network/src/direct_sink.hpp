// DirectSink of the network's forwarder groups: what a Caller sends to a forwarder (a remote
// group's actor for one node, or a direct forwarder of system.network for actor addresses there)
// is encoded and handed to that node's connection on the Caller's own thread. The forwarder's
// way — its mailbox, a worker woken to run it, the same encoding there — costs a thread switch
// per message that a thread sending one request at a time and waiting for its answer does not
// need. Actors keep that way: their forwarder batches what many of them send.
//
// Writes. A request from a Caller with no other request outstanding is written to the socket on
// the calling thread at once (its answer is all that thread waits for). One from a Caller with
// requests in flight — a window of them, or many threads sharing the Caller — joins the
// connection's buffer for its I/O thread, which writes it with whatever else the Caller queues
// before it gets there: a burst of requests leaves in one write, not one system call each.
//
// Order. elfin keeps one sender's messages to one recipient in order. A Caller's messages to a
// forwarder all take this way or all the mailbox's (the sink declines by the forwarder and the
// message's kind alone), so none waits in a mailbox while a later one overtakes it. Every
// Caller's messages travel on one flow per connection, whichever thread sends them (as every
// actor's through a forwarder share its flow; a Caller that comes and goes leaves nothing behind
// on the connection): frames enter the connection's buffer in the order their threads append
// them, the buffer is written in order, and the receiver delivers each flow's messages in order
// (flows.hpp). A message sent after another — by the same thread, or by one that knows the first
// was sent — arrives after it.
//
// Credit. A message takes a credit of the flow, as a forwarder's do. With none left the sink
// answers Full and parks the Caller's cell on the flow, beside any other Caller waiting there:
// each waits as it waits for a full mailbox, up to the call's timeout, and tries again once
// credit comes back or the connection closes. Waiting is fine on a thread that runs no actor;
// falling back to the forwarder would break the order above.
//
// Failure. No connection, no such group on the peer, a connection lost while waiting for credit,
// a message that does not encode: the message is dropped as a forwarder drops it — a request
// fails at once with the same error text — and the first drop per node is logged, the next ones
// counted until a message to the node leaves again.
//
// Thread safety: `carry` from any number of threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <elfin/internal/system_hooks.hpp>

namespace elfin::network::detail {

class NetworkState;

class ForwarderSink final : public elfin::detail::DirectSink {
 public:
  /// `remote_name`: the peer's group that a remote group's forwarders (keyed by node number) send
  /// through; empty: system.network's direct forwarders (keyed `kDirectKeyTag | node`).
  ForwarderSink(std::shared_ptr<NetworkState> net, std::string remote_name);

  [[nodiscard]] Outcome carry(elfin::detail::ActorCell& target, Envelope& envelope, elfin::detail::ActorCell* waiter,
                              bool alone) override;

 private:
  /// The node `target` forwards to; nullopt for the actors that are no forwarders.
  [[nodiscard]] std::optional<std::uint16_t> node_of(elfin::detail::ActorCell& target) const;
  Outcome drop(Envelope& envelope, std::uint16_t node, std::string_view why);
  /// A message to `node` left: logs how many were dropped before, if any.
  void left(std::uint16_t node);

  const std::shared_ptr<NetworkState> net_;
  const std::string remote_name_;
  std::atomic<bool> any_dropped_{false};  // drops_ is not empty (so that `left` rarely locks)
  std::mutex drops_mu_;
  std::map<std::uint16_t, std::uint64_t> drops_;  // guarded by drops_mu_: dropped since the last that left
};

}  // namespace elfin::network::detail
