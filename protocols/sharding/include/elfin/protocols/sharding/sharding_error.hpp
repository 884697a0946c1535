// ShardingError: why the manager or a pod refused a sharding request — a typed answer the caller
// acts on (retry later, re-register, follow the owner hint), not a failure of the actor.
//
//   Register   ShardFunctionMismatch, PodDead, StaleIncarnation, StorageUnavailable, BadRequest
//   Unregister UnknownPod, StorageUnavailable
//   Assign/Unassign (answered by the pod)  WrongIncarnation, StaleEpoch, Draining
//   entity delivery (answered by a pod)    NotOwner, with the receiver's epoch and its owner hint
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/message.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>

namespace elfin::protocols::sharding {

enum class ShardingErrorKind : std::uint8_t {
  /// Register: the pod's shard function (name, version, shard count) is not the cluster's; it
  /// would route entities elsewhere. `detail` names both.
  ShardFunctionMismatch,
  /// Register: the health check says this very pod is dead (e.g. a process that lost its
  /// listener); it must not take shards.
  PodDead,
  /// Register: a newer incarnation already registered at this address; this process is the old one.
  StaleIncarnation,
  /// Unregister, ReportUnhealthyPod: the manager does not know this pod (incarnation included).
  UnknownPod,
  /// The manager cannot persist the change, so it acknowledges nothing; retry later.
  StorageUnavailable,
  /// Assign/Unassign/Ping answered by a pod that is another incarnation than the one named.
  WrongIncarnation,
  /// Assign/Unassign older than what the pod already holds for one of the shards.
  StaleEpoch,
  /// Assign to a pod that is stopping: it takes no new shards (Shardcake acknowledged and ignored it).
  Draining,
  /// A pod received an entity message for a shard it does not own at its epoch; see `not_owner`.
  NotOwner,
  /// A field out of range (an empty address, an unknown shard).
  BadRequest,
  /// A kind this build does not know (sent by a newer peer); `detail` still says what happened.
  Other,
};
// By variant name on the wire, so kinds can be added without breaking older peers.
ELFIN_ENUM(ShardingErrorKind, ShardFunctionMismatch, PodDead, StaleIncarnation, UnknownPod, StorageUnavailable,
           WrongIncarnation, StaleEpoch, Draining, NotOwner, BadRequest, ELFIN_OTHER(Other));

/// The receiving pod's view when it does not own a shard: the sender refreshes its map if
/// `epoch` is newer than its own and retries towards `owner` (none: unassigned right now).
struct NotOwner {
  std::uint32_t shard = 0;
  std::uint64_t epoch = 0;  ///< the epoch of the receiver's map
  std::optional<PodEntry> owner;
  ELFIN_PART(shard, epoch, owner);

  friend bool operator==(const NotOwner&, const NotOwner&) = default;
};

struct ShardingError {
  ShardingErrorKind kind = ShardingErrorKind::BadRequest;
  std::string detail;                 ///< for people: what exactly was wrong
  std::optional<NotOwner> not_owner;  ///< with kind NotOwner
  ELFIN_PART(kind, detail, not_owner);

  friend bool operator==(const ShardingError&, const ShardingError&) = default;
};

[[nodiscard]] std::string_view to_string(ShardingErrorKind kind) noexcept;

}  // namespace elfin::protocols::sharding

template <>
struct fmt::formatter<elfin::protocols::sharding::ShardingError> : fmt::formatter<std::string_view> {
  auto format(const elfin::protocols::sharding::ShardingError& e, fmt::format_context& ctx) const {
    auto out = fmt::format_to(ctx.out(), "{}", elfin::protocols::sharding::to_string(e.kind));
    if (!e.detail.empty()) out = fmt::format_to(out, ": {}", e.detail);
    return out;
  }
};
