#include <elfin/assignment/rebalance.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <utility>
#include <vector>

namespace elfin::assignment {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// One round's working state, with pods and shards replaced by indices so the inner loop (every
// shard to place × every pod) compares integers, not addresses.
struct Round {
  std::vector<const Pod*> pods;        // sorted by id, one per id
  std::vector<ShardId> shards;         // the map's shards, ascending
  std::vector<std::size_t> owner;      // per shard: index into pods, or kNone (unassigned or gone)
  std::vector<const PodId*> recorded;  // per shard: the owner the map records (may be gone), or null
  std::vector<std::uint32_t> load;     // per pod: shards owned, as the round goes
};

Round make_round(std::span<const Pod> input, const AssignmentMap& map) {
  Round round;
  round.pods.reserve(input.size());
  for (const Pod& pod : input) round.pods.push_back(&pod);
  // Pointers into `input` rank entries of one id by their position, so that the first listed is
  // the one kept. (Not std::stable_sort: libstdc++ 12's raises a deprecation warning in clang.)
  std::sort(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) {
    if (a->id != b->id) return a->id < b->id;
    return std::less<const Pod*>{}(a, b);
  });
  round.pods.erase(
      std::unique(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) { return a->id == b->id; }),
      round.pods.end());
  round.load.assign(round.pods.size(), 0);

  round.shards.reserve(map.shard_count());
  round.owner.reserve(map.shard_count());
  round.recorded.reserve(map.shard_count());
  // The map's owners come in shard order and usually repeat; remember the last lookup.
  const PodId* last_id = nullptr;
  std::size_t last_index = kNone;
  for (const auto& [shard, owner] : map.owners()) {
    round.shards.push_back(shard);
    round.recorded.push_back(owner ? &*owner : nullptr);
    std::size_t index = kNone;
    if (owner) {
      if (last_id != nullptr && *last_id == *owner) {
        index = last_index;
      } else {
        const auto it = std::lower_bound(round.pods.begin(), round.pods.end(), *owner,
                                         [](const Pod* pod, const PodId& id) { return pod->id < id; });
        if (it != round.pods.end() && (*it)->id == *owner) index = static_cast<std::size_t>(it - round.pods.begin());
        last_id = &*owner;
        last_index = index;
      }
    }
    round.owner.push_back(index);
    if (index != kNone) ++round.load[index];
  }
  return round;
}

}  // namespace

std::uint32_t max_gain_per_round(std::size_t shard_count, double rebalance_rate) noexcept {
  if (!(rebalance_rate > 0)) return 0;
  // The tolerance keeps a product such as 300 × 0.02, which binary floating point may put a hair
  // above 6, from becoming 7.
  const double limit = std::ceil(static_cast<double>(shard_count) * rebalance_rate - 1e-9);
  // ... while any positive rate allows one shard (the tolerance must not take that away).
  if (limit < 1) return shard_count == 0 ? 0 : 1;
  if (limit >= static_cast<double>(std::numeric_limits<std::uint32_t>::max())) {
    return std::numeric_limits<std::uint32_t>::max();
  }
  return static_cast<std::uint32_t>(limit);
}

RebalancePlan plan_rebalance(std::span<const Pod> pods, const AssignmentMap& map, RoundKind kind,
                             const RebalanceOptions& options) {
  if (pods.empty() || map.shard_count() == 0) return {};
  Round round = make_round(pods, map);
  const std::size_t pod_count = round.pods.size();
  const std::size_t shard_count = round.shards.size();

  const PodVersion& newest = (*std::max_element(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) {
                               return a->version < b->version;
                             }))->version;
  std::vector<bool> is_newest(pod_count);
  bool all_newest = true;
  for (std::size_t p = 0; p < pod_count; ++p) {
    is_newest[p] = round.pods[p]->version == newest;
    all_newest = all_newest && is_newest[p];
  }

  // Step 1: if there are orphans, placing them is all this round does.
  std::vector<std::size_t> to_place;  // indices into round.shards
  for (std::size_t s = 0; s < shard_count; ++s) {
    if (round.owner[s] == kNone) to_place.push_back(s);
  }
  const bool balancing = kind == RoundKind::Regular && to_place.empty();

  // Step 2: the extras of pods above the average, only when no rolling update is under way.
  if (balancing && all_newest) {
    const std::size_t average = shard_count / pod_count;
    std::vector<std::vector<std::size_t>> owned(pod_count);
    for (std::size_t s = 0; s < shard_count; ++s) owned[round.owner[s]].push_back(s);
    for (std::size_t p = 0; p < pod_count; ++p) {
      if (owned[p].size() <= average) continue;
      // The highest ids: any fixed choice works, and this one keeps a pod's low range in place.
      to_place.insert(to_place.end(), owned[p].end() - static_cast<std::ptrdiff_t>(owned[p].size() - average),
                      owned[p].end());
    }
    // Step 3's order: the fullest pods' extras first; within a pod, ascending ids.
    const std::vector<std::uint32_t> start_load = round.load;
    std::sort(to_place.begin(), to_place.end(), [&](std::size_t a, std::size_t b) {
      const std::size_t pa = round.owner[a];
      const std::size_t pb = round.owner[b];
      if (start_load[pa] != start_load[pb]) return start_load[pa] > start_load[pb];
      if (pa != pb) return pa < pb;
      return a < b;
    });
  }

  // Steps 3 and 4. `candidates` holds the pods that may still gain in this round, ordered by
  // (load, pod index), so the first is the target and ties go to pod order. A pod leaves it for
  // good when it loses a shard or reaches the cap, which is why a round costs
  // O(shards × log pods) rather than a scan of every pod for every shard.
  const std::uint32_t cap =
      balancing ? max_gain_per_round(shard_count, options.rebalance_rate) : std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> gained(pod_count, 0);
  std::vector<bool> losing(pod_count, false);
  std::set<std::pair<std::uint32_t, std::size_t>> candidates;
  for (std::size_t p = 0; p < pod_count; ++p) {
    if (is_newest[p] && cap > 0) candidates.emplace(round.load[p], p);
  }
  RebalancePlan plan;
  for (std::size_t s : to_place) {
    if (candidates.empty()) break;  // it never refills within a round
    const auto [target_load, target] = *candidates.begin();
    const std::size_t owner = round.owner[s];
    // Covers target == owner as well: moving for a difference of one only swaps the imbalance.
    if (owner != kNone && round.load[owner] <= target_load + 1) continue;
    candidates.erase(candidates.begin());
    ++round.load[target];
    if (++gained[target] < cap) candidates.emplace(round.load[target], target);
    if (owner != kNone) {
      if (!losing[owner]) candidates.erase({round.load[owner], owner});
      losing[owner] = true;
      --round.load[owner];
    }
    round.owner[s] = target;
    const PodId* from = round.recorded[s];
    plan.moves.push_back(
        Move{round.shards[s], from ? std::optional<PodId>(*from) : std::nullopt, round.pods[target]->id});
  }
  // Orphans come in shard order already; extras do not.
  auto by_shard = [](const Move& a, const Move& b) { return a.shard < b.shard; };
  if (!std::is_sorted(plan.moves.begin(), plan.moves.end(), by_shard)) {
    std::sort(plan.moves.begin(), plan.moves.end(), by_shard);
  }
  return plan;
}

std::string_view to_string(RoundKind kind) noexcept {
  switch (kind) {
    case RoundKind::Regular:
      return "regular";
    case RoundKind::Immediate:
      return "immediate";
  }
  return "unknown";
}

}  // namespace elfin::assignment
