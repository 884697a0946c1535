// ReplicaPlan: the replica changes one replica rebalance round decided. Each change adds a replica
// on a pod (`to`), takes one away (`from`), or both at once: a move, which a replicated service
// carries out as "add the new replica, let it catch up, then remove the old one", so the shard
// never has fewer live replicas than before. A shard has at most one move per round; additions
// that fill a shard's missing replicas (after a pod died, or at the start) may be several.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include <elfin/assignment/fwd.hpp>
#include <elfin/assignment/pod.hpp>

namespace elfin::assignment {

/// One replica of one shard changing pods. `from` empty: a replica added; `to` empty: one
/// removed (the shard has more than `replication_factor`). `from` may name a pod that is gone.
struct ReplicaMove {
  ShardId shard = 0;
  std::optional<PodId> from;
  std::optional<PodId> to;

  friend bool operator==(const ReplicaMove&, const ReplicaMove&) = default;
};

struct [[nodiscard]] ReplicaPlan {
  std::vector<ReplicaMove> moves;  ///< in shard order

  [[nodiscard]] bool empty() const noexcept { return moves.empty(); }
  /// The shards each pod gains a replica of.
  [[nodiscard]] std::map<PodId, std::vector<ShardId>> additions() const;
  /// The shards each pod loses a replica of.
  [[nodiscard]] std::map<PodId, std::vector<ShardId>> removals() const;

  friend bool operator==(const ReplicaPlan&, const ReplicaPlan&) = default;
};

}  // namespace elfin::assignment

/// `shard 5: 10.0.0.1:1#1 -> 10.0.0.2:1#4`; `(none)` on the side that is empty.
template <>
struct fmt::formatter<elfin::assignment::ReplicaMove> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::ReplicaMove& move, fmt::format_context& ctx) const {
    auto out = fmt::format_to(ctx.out(), "shard {}: ", move.shard);
    out = move.from ? fmt::format_to(out, "{}", *move.from) : fmt::format_to(out, "(none)");
    return move.to ? fmt::format_to(out, " -> {}", *move.to) : fmt::format_to(out, " -> (none)");
  }
};

/// `2 changes: shard 5: ... -> ...; shard 9: ... -> ...`, or `no changes`.
template <>
struct fmt::formatter<elfin::assignment::ReplicaPlan> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::ReplicaPlan& plan, fmt::format_context& ctx) const {
    if (plan.moves.empty()) return fmt::format_to(ctx.out(), "no changes");
    auto out = fmt::format_to(ctx.out(), "{} change{}: ", plan.moves.size(), plan.moves.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < plan.moves.size(); ++i)
      out = fmt::format_to(out, "{}{}", i == 0 ? "" : "; ", plan.moves[i]);
    return out;
  }
};
