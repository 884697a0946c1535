// The rebalance: which shards move in one round, as a pure function of the registered pods and the
// current map (no clocks, no I/O, no randomness: the same input gives the same plan). It is
// Shardcake's assignment algorithm, with its random picks replaced by a fixed order:
//
//   1. Orphans first. If the round is Immediate, or any shard is unassigned (its pod left or died),
//      only the unassigned shards are placed, with no cap: a shard without an owner is an outage.
//   2. Otherwise, and only when every pod runs the newest version, take the extras: each pod above
//      avg = shards / pods (integer division) offers its (count - avg) highest shard ids. While
//      versions are mixed nothing is offered — no rebalancing during a rolling update.
//   3. Place the shards in order: extras of the fullest pods first (ties: pod order), then by id.
//      Each goes to the pod with the fewest shards (ties: pod order) among those that run the
//      newest version, lose nothing this round, and in a regular round have gained fewer than
//      ceil(shards × rebalance_rate) shards this round.
//   4. No move if that pod is the owner, or holds only one shard fewer than the owner.
//
// The plan says what to do; the shard manager does it (unassign, then assign) and applies to the
// map what succeeded. Rounds must not overlap: one plan is carried out before the next is made.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <elfin/assignment/assignment_map.hpp>
#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance_plan.hpp>

namespace elfin::assignment {

enum class RoundKind : std::uint8_t {
  Regular,  ///< the periodic round: places orphans if there are any, else evens out the load
  /// After a pod unregistered or died: places orphans only. Also the round to run when balancing
  /// would be unsafe (a pod is unreachable or still joining, as Pekko holds back): orphans are
  /// never held back.
  Immediate,
};

struct RebalanceOptions {
  /// In a regular round a pod gains at most ceil(shards × rebalance_rate) shards (300 × 0.02:
  /// 6), so a new pod takes its share over several rounds instead of stopping a large part of
  /// the cluster's entities at once. Orphans ignore it. Shardcake's default.
  double rebalance_rate = 0.02;

  friend bool operator==(const RebalanceOptions&, const RebalanceOptions&) = default;
};

/// What one round moves. Pods listed twice (same id) count once, the first one. Shards the map
/// gives to a pod missing from `pods` are orphans: placed first, their move's `from` naming the
/// missing pod. With no pods, nothing moves.
[[nodiscard]] RebalancePlan plan_rebalance(std::span<const Pod> pods, const AssignmentMap& map, RoundKind kind,
                                           const RebalanceOptions& options = {});

/// ceil(shard_count × rebalance_rate): the most shards a pod gains in one regular round.
[[nodiscard]] std::uint32_t max_gain_per_round(std::size_t shard_count, double rebalance_rate) noexcept;

[[nodiscard]] std::string_view to_string(RoundKind kind) noexcept;

}  // namespace elfin::assignment

template <>
struct fmt::formatter<elfin::assignment::RoundKind> : fmt::formatter<std::string_view> {
  auto format(elfin::assignment::RoundKind kind, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::assignment::to_string(kind), ctx);
  }
};
