// PodRef: a pod as the sharding protocol names it — the address it serves at *and* the
// incarnation of the process serving there. A process restarted at the same address has a new
// incarnation and is a different pod: it inherits nothing, and a command stamped with the old
// incarnation is refused by the new process (the recycled-address confusion of Shardcake #107).
// The incarnation is the pod's to choose, unique per start at that address (the node's launch id
// is a natural one).
//
// `endpoint` is the elfin address (raw `Addr`) of the pod's sharding actor, which answers the
// manager's PingPod, AssignShards and UnassignShards and receives AssignmentsChanged. An address
// names its node, so the same value reaches a pod on another node through the network battery.
//
// Thread safety: plain value types.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include <elfin/message.hpp>

namespace elfin::protocols::sharding {

struct PodRef {
  std::string address;            ///< `host:port` (or any name unique in the cluster)
  std::uint64_t incarnation = 0;  ///< distinct for every start of a process at `address`
  ELFIN_PART(address, incarnation);

  friend bool operator==(const PodRef&, const PodRef&) = default;
  friend std::strong_ordering operator<=>(const PodRef&, const PodRef&) = default;
};

/// A registered pod as everyone may know it: who, where its sharding actor is, what it runs.
struct PodEntry {
  PodRef pod;
  std::uint64_t endpoint = 0;  ///< raw `elfin::Addr` of the pod's sharding actor
  std::string version;         ///< the software version, `1.2.0` (rolling updates)
  ELFIN_PART(pod, endpoint, version);

  friend bool operator==(const PodEntry&, const PodEntry&) = default;
};

}  // namespace elfin::protocols::sharding

/// `10.0.0.7:54321#3`, as elfin::assignment writes a pod id.
template <>
struct fmt::formatter<elfin::protocols::sharding::PodRef> : fmt::formatter<std::string_view> {
  auto format(const elfin::protocols::sharding::PodRef& pod, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{}#{}", pod.address, pod.incarnation);
  }
};
