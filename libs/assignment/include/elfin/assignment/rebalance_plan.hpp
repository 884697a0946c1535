// RebalancePlan: the moves one rebalance round decided, before anything is done about them. The
// shard manager carries a plan out in Shardcake's order — unassign from the old owners (their
// entities stop), then assign to the new ones — and may drop moves on the way (a pod that did not
// answer a ping, an unassign that failed); what it applies to the map is what actually happened.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>

namespace elfin::assignment {

/// One shard changing hands. `from` is the owner the map records (empty: the shard was
/// unassigned); it may name a pod that is gone, whose shards the round placed as orphans.
struct Move {
  ShardId shard = 0;
  std::optional<PodId> from;
  PodId to;

  friend bool operator==(const Move&, const Move&) = default;
};

struct [[nodiscard]] RebalancePlan {
  std::vector<Move> moves;  ///< at most one per shard, in shard order

  [[nodiscard]] bool empty() const noexcept { return moves.empty(); }
  /// The shards each pod gains, for its `assign` call.
  [[nodiscard]] std::map<PodId, std::vector<ShardId>> assignments() const;
  /// The shards each previous owner loses, for its `unassign` call (orphans have none).
  [[nodiscard]] std::map<PodId, std::vector<ShardId>> unassignments() const;

  friend bool operator==(const RebalancePlan&, const RebalancePlan&) = default;
};

}  // namespace elfin::assignment

/// `shard 5: 10.0.0.1:1#1 -> 10.0.0.2:1#4` (`(unassigned)` for an orphan).
template <>
struct fmt::formatter<elfin::assignment::Move> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::Move& move, fmt::format_context& ctx) const {
    if (move.from) return fmt::format_to(ctx.out(), "shard {}: {} -> {}", move.shard, *move.from, move.to);
    return fmt::format_to(ctx.out(), "shard {}: (unassigned) -> {}", move.shard, move.to);
  }
};

/// `2 moves: shard 5: ... -> ...; shard 9: ... -> ...`, or `no moves`.
template <>
struct fmt::formatter<elfin::assignment::RebalancePlan> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::RebalancePlan& plan, fmt::format_context& ctx) const {
    if (plan.moves.empty()) return fmt::format_to(ctx.out(), "no moves");
    auto out = fmt::format_to(ctx.out(), "{} move{}: ", plan.moves.size(), plan.moves.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < plan.moves.size(); ++i) {
      out = fmt::format_to(out, "{}{}", i == 0 ? "" : "; ", plan.moves[i]);
    }
    return out;
  }
};
