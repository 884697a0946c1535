// AssignmentMap: which pod owns each shard, stamped with an epoch. Every new map has a higher
// epoch than the one it was made from, so pods and senders can tell a newer map from a stale one
// ("not owner, epoch E" replies; Shardcake stored no epoch and could not). A shard has at most one
// owner here by construction; that it never has two *running* is the shard manager's business
// (unassign before assign).
//
// Shard ids are whatever the shard function yields (0..N-1 for jump-xxh64, 1..N for shardcake);
// the map holds the full set, assigned or not, so the total never changes.
//
// Thread safety: a plain value type; making a new map leaves the old one untouched.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance_plan.hpp>
#include <elfin/result.hpp>

namespace elfin::assignment {

/// Why a plan does not fit a map (it was made from another map, or edited wrongly).
enum class PlanErrorKind : std::uint8_t {
  UnknownShard,    ///< a move names a shard the map does not hold
  StaleOwner,      ///< a move's `from` is not the shard's owner in this map
  DuplicateShard,  ///< two moves of one shard
  ReplicaPresent,  ///< a replica move's `to` holds a replica of the shard already
};

struct PlanError {
  PlanErrorKind kind = PlanErrorKind::UnknownShard;
  ShardId shard = 0;

  friend bool operator==(const PlanError&, const PlanError&) = default;
};

class [[nodiscard]] AssignmentMap {
 public:
  /// No shards, epoch 0.
  AssignmentMap() = default;

  /// Shards `first` .. `first + count - 1`, none assigned, at `epoch`.
  [[nodiscard]] static AssignmentMap unassigned(ShardId first, std::uint32_t count, std::uint64_t epoch = 0);
  /// A map as stored (each shard with its owner or none) at `epoch`.
  [[nodiscard]] static AssignmentMap from_owners(std::map<ShardId, std::optional<PodId>> owners, std::uint64_t epoch);

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::size_t shard_count() const noexcept { return owners_.size(); }
  [[nodiscard]] const std::map<ShardId, std::optional<PodId>>& owners() const noexcept { return owners_; }
  [[nodiscard]] bool contains(ShardId shard) const { return owners_.contains(shard); }
  /// The shard's owner; empty if it is unassigned or not in the map.
  [[nodiscard]] std::optional<PodId> owner(ShardId shard) const;
  /// The shards `pod` owns, ascending.
  [[nodiscard]] std::vector<ShardId> shards_of(const PodId& pod) const;
  /// The shards nobody owns, ascending.
  [[nodiscard]] std::vector<ShardId> unassigned_shards() const;
  /// How many shards each pod owns (pods owning none are absent).
  [[nodiscard]] std::map<PodId, std::size_t> counts() const;

  /// The next map (epoch + 1) with `pod`'s shards unassigned: it unregistered or was found dead.
  /// If it owned nothing, this same map.
  [[nodiscard]] AssignmentMap without_pod(const PodId& pod) const;

  /// The next map (epoch + 1) with the plan's moves made, or this same map for an empty plan.
  /// A plan that does not fit this map changes nothing and says which shard is wrong.
  [[nodiscard]] Result<AssignmentMap, PlanError> apply(const RebalancePlan& plan) const;

  friend bool operator==(const AssignmentMap&, const AssignmentMap&) = default;

 private:
  std::uint64_t epoch_ = 0;
  std::map<ShardId, std::optional<PodId>> owners_;
};

[[nodiscard]] std::string_view to_string(PlanErrorKind kind) noexcept;

/// `0-99,205,300-301`: shard ids, runs of consecutive ids written as ranges.
[[nodiscard]] std::string format_shard_ids(const std::vector<ShardId>& ascending);

}  // namespace elfin::assignment

template <>
struct fmt::formatter<elfin::assignment::PlanError> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::PlanError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "the plan does not fit the map at shard {}: {}", e.shard,
                          elfin::assignment::to_string(e.kind));
  }
};

/// `epoch 4, 300 shards: 10.0.0.1:1#1 owns 150 (0-149); 10.0.0.2:1#1 owns 150 (150-299)`,
/// then `; unassigned 2 (7,9)` when some are.
template <>
struct fmt::formatter<elfin::assignment::AssignmentMap> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::AssignmentMap& map, fmt::format_context& ctx) const {
    auto out = fmt::format_to(ctx.out(), "epoch {}, {} shards", map.epoch(), map.shard_count());
    const char* separator = ": ";
    for (const auto& [pod, count] : map.counts()) {
      out = fmt::format_to(out, "{}{} owns {} ({})", separator, pod, count,
                           elfin::assignment::format_shard_ids(map.shards_of(pod)));
      separator = "; ";
    }
    const auto unassigned = map.unassigned_shards();
    if (!unassigned.empty()) {
      out = fmt::format_to(out, "{}unassigned {} ({})", separator, unassigned.size(),
                           elfin::assignment::format_shard_ids(unassigned));
    }
    return out;
  }
};
