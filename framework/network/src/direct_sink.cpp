#include "direct_sink.hpp"

#include <fmt/format.h>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/waker.hpp>

#include "connection.hpp"
#include "network_state.hpp"
#include "undelivered.hpp"

namespace elfin::network::detail {

namespace {

/// Takes a credit of `flow`; with none, parks `waiter` (if any) for when there may be one.
bool acquire(TxFlow& flow, elfin::detail::ActorCell* waiter) {
  if (flow.try_acquire()) return true;
  if (waiter == nullptr || flow.closed()) return false;
  flow.park(elfin::detail::Waker{waiter->shared_from_this()});
  // Credit granted between the first look and the park woke nobody: look again.
  return flow.try_acquire();
}

}  // namespace

ForwarderSink::ForwarderSink(std::shared_ptr<NetworkState> net, std::string remote_name)
    : net_(std::move(net)), remote_name_(std::move(remote_name)) {}

std::optional<std::uint16_t> ForwarderSink::node_of(elfin::detail::ActorCell& target) const {
  if (!remote_name_.empty()) return static_cast<elfin::detail::KeyedCell<std::uint16_t>&>(target).key();
  const std::uint64_t key = static_cast<elfin::detail::KeyedCell<std::uint64_t>&>(target).key();
  if (!is_direct_key(key)) return std::nullopt;  // the manager, a pusher
  return static_cast<std::uint16_t>(key);
}

elfin::detail::DirectSink::Outcome ForwarderSink::carry(elfin::detail::ActorCell& target, Envelope& envelope,
                                                        elfin::detail::ActorCell* waiter, bool alone) {
  // System messages (UpdateConfig, Terminate, ...) are for the forwarder, not the peer; and a
  // forwarder for this very node (a pick chose it) delivers to a local group.
  if (envelope.vtable().is_system) return Outcome::Declined;
  const auto node = node_of(target);
  if (!node || *node == net_->node_no()) return Outcome::Declined;

  auto conn = net_->connection(*node);
  if (!conn) return drop(envelope, *node, "the node is not connected");
  std::uint8_t group_no = 0;
  if (!remote_name_.empty()) {
    group_no = conn->peer_group(remote_name_);
    if (group_no == 0) return drop(envelope, *node, fmt::format("node {} has no group `{}`", *node, remote_name_));
  }
  auto flow = conn->callers_flow();
  if (!acquire(*flow, waiter)) {
    return flow->closed() ? drop(envelope, *node, "the connection was lost") : Outcome::Full;
  }
  // The thread's buffer goes to the connection and comes back with the capacity of another.
  thread_local std::string frames;
  const bool write_now = alone && envelope.kind() == MessageKind::Request;
  if (auto encoded = conn->encode_envelope(envelope, *flow, group_no, frames); !encoded) {
    flow->grant(1);  // nothing left, so the peer will never acknowledge it
    return drop(envelope, *node, encoded.error());
  }
  conn->send_encoded(frames, 1, write_now);
  if (any_dropped_.load(std::memory_order_relaxed)) left(*node);
  return Outcome::Taken;
}

elfin::detail::DirectSink::Outcome ForwarderSink::drop(Envelope& envelope, std::uint16_t node, std::string_view why) {
  fail_undelivered(envelope, node, why);
  bool first = false;
  {
    std::lock_guard lock(drops_mu_);
    first = drops_[node]++ == 0;
    any_dropped_.store(true, std::memory_order_relaxed);
  }
  if (first) {
    net_->log(LogLevel::Warn,
              fmt::format("{}.{} to node {} dropped: {} (further drops until the node is back are counted, not logged)",
                          envelope.protocol(), envelope.name(), node, why));
  }
  return Outcome::Taken;
}

void ForwarderSink::left(std::uint16_t node) {
  std::uint64_t dropped = 0;
  {
    std::lock_guard lock(drops_mu_);
    if (auto it = drops_.find(node); it != drops_.end()) {
      dropped = it->second;
      drops_.erase(it);
    }
    any_dropped_.store(!drops_.empty(), std::memory_order_relaxed);
  }
  if (dropped > 0) {
    net_->log(LogLevel::Info,
              fmt::format("node {} is back; {} message(s) to it were dropped while it was away", node, dropped));
  }
}

}  // namespace elfin::network::detail
