// A pod: one process hosting sharded entities, as the shard manager knows it. Its identity is its
// address *and* its incarnation (issued when it registers): a process restarted at the same
// address is a different pod, so it never inherits shards the old one held — the confusion
// behind Shardcake #107, where a recycled IP kept a dead pod "alive". Pods are ordered by address,
// then incarnation; the rebalance breaks every tie in that order, so it is deterministic.
//
// Thread safety: plain value types.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include <elfin/assignment/pod_version.hpp>

namespace elfin::assignment {

/// Who a pod is: where it listens and which start of the process at that address.
struct PodId {
  std::string address;            ///< `host:port` where the pod serves its sharding API
  std::uint64_t incarnation = 0;  ///< distinct for every registration at that address

  friend bool operator==(const PodId&, const PodId&) = default;
  friend std::strong_ordering operator<=>(const PodId&, const PodId&) = default;
};

/// A registered pod: its identity and the version of the software it runs.
struct Pod {
  PodId id;
  PodVersion version;

  friend bool operator==(const Pod&, const Pod&) = default;
};

}  // namespace elfin::assignment

/// `10.0.0.7:54321#3`
template <>
struct fmt::formatter<elfin::assignment::PodId> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::PodId& id, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{}#{}", id.address, id.incarnation);
  }
};

/// `10.0.0.7:54321#3 v1.2.0`
template <>
struct fmt::formatter<elfin::assignment::Pod> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::Pod& pod, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{} v{}", pod.id, pod.version);
  }
};
