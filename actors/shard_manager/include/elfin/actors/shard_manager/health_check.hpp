// HealthCheck: whether a pod is alive, asked by the shard manager before it takes shards away
// from a pod that failed a ping, an unassign or an assign, or that another pod reported. Only a
// pod found *dead* loses its shards: a pod that is alive but unreachable keeps them (senders time
// out instead), because giving them away could run an entity on two pods.
//
// The manager pings the pod itself (`PingPod`, `ping_timeout`) and hands the outcome to the
// check. The default, DirectPingHealthCheck, decides from that outcome alone:
//   Answered          the pod answered as the incarnation asked for   -> Alive
//   OtherIncarnation  another process answers at that endpoint         -> Dead (recycled address)
//   Unreachable       the request failed at once: no route to the node,
//                     or the pod's actor is gone                       -> Dead
//   NoAnswer          nothing within ping_timeout (or a dropped token) -> Unknown (kept: alive)
// A direct ping cannot tell a dead node from a network partition that cuts only the manager off:
// both are Unreachable. Where that matters, implement HealthCheck against an authority that
// knows (Kubernetes: the pod object by its IP, with a short cache, as Shardcake does); an error
// there must answer Unknown, which the manager treats as alive.
//
// Thread safety: called from the manager's actor only.
#pragma once

#include <cstdint>
#include <string_view>

#include <elfin/protocols/sharding/pod_ref.hpp>

namespace elfin::actors::shard_manager {

enum class PingOutcome : std::uint8_t { Answered, OtherIncarnation, Unreachable, NoAnswer };
enum class Health : std::uint8_t { Alive, Dead, Unknown };

class HealthCheck {
 public:
  virtual ~HealthCheck() = default;
  /// Is `pod` (this incarnation) alive? `ping` is what the manager's own ping just found.
  [[nodiscard]] virtual Health check(const protocols::sharding::PodEntry& pod, PingOutcome ping) = 0;
};

class DirectPingHealthCheck final : public HealthCheck {
 public:
  [[nodiscard]] Health check(const protocols::sharding::PodEntry& pod, PingOutcome ping) override;
};

[[nodiscard]] std::string_view to_string(PingOutcome outcome) noexcept;
[[nodiscard]] std::string_view to_string(Health health) noexcept;

}  // namespace elfin::actors::shard_manager
