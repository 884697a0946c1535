#include <elfin/assignment/replica_rebalance.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace elfin::assignment {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

bool at_most_one_replica(const ReplicaMap& map) {
  return std::all_of(map.replica_sets().begin(), map.replica_sets().end(),
                     [](const auto& entry) { return entry.second.size() <= 1; });
}

// RF = 1: Shardcake's plan over the owners, as replica moves.
ReplicaPlan single_owner_plan(std::span<const Pod> pods, const ReplicaMap& map, RoundKind kind,
                              const ReplicaOptions& options) {
  const RebalancePlan plan = plan_rebalance(pods, map.owners(), kind, RebalanceOptions{options.rebalance_rate});
  ReplicaPlan replicas;
  replicas.moves.reserve(plan.moves.size());
  for (const Move& move : plan.moves) replicas.moves.push_back(ReplicaMove{move.shard, move.from, move.to});
  return replicas;
}

// One round's working state, pods and shards as indices.
struct Round {
  std::vector<const Pod*> pods;                 // sorted by id, one per id
  std::vector<ShardId> shards;                  // ascending
  std::vector<std::vector<std::size_t>> held;   // per shard: live replicas as pod indices, in map order
  std::vector<std::vector<const PodId*>> gone;  // per shard: replicas on pods not in `pods`
  std::vector<std::set<std::size_t>> holds;     // per pod: shard indices it holds a replica of
  std::vector<bool> newest;                     // per pod: runs the newest version
  bool all_newest = true;

  [[nodiscard]] std::size_t load(std::size_t pod) const { return holds[pod].size(); }
  [[nodiscard]] bool holds_shard(std::size_t pod, std::size_t shard) const { return holds[pod].contains(shard); }
};

Round make_round(std::span<const Pod> input, const ReplicaMap& map) {
  Round round;
  for (const Pod& pod : input) round.pods.push_back(&pod);
  // The first listed of one id is kept (pointer order ranks entries by position in `input`).
  std::sort(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) {
    if (a->id != b->id) return a->id < b->id;
    return std::less<const Pod*>{}(a, b);
  });
  round.pods.erase(
      std::unique(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) { return a->id == b->id; }),
      round.pods.end());
  round.holds.resize(round.pods.size());
  const PodVersion& newest = (*std::max_element(round.pods.begin(), round.pods.end(), [](const Pod* a, const Pod* b) {
                               return a->version < b->version;
                             }))->version;
  for (const Pod* pod : round.pods) {
    round.newest.push_back(pod->version == newest);
    round.all_newest = round.all_newest && round.newest.back();
  }
  for (const auto& [shard, replicas] : map.replica_sets()) {
    const std::size_t s = round.shards.size();
    round.shards.push_back(shard);
    round.held.emplace_back();
    round.gone.emplace_back();
    for (const PodId& id : replicas) {
      const auto it = std::lower_bound(round.pods.begin(), round.pods.end(), id,
                                       [](const Pod* pod, const PodId& key) { return pod->id < key; });
      if (it != round.pods.end() && (*it)->id == id) {
        const auto p = static_cast<std::size_t>(it - round.pods.begin());
        round.held[s].push_back(p);
        round.holds[p].insert(s);
      } else {
        round.gone[s].push_back(&id);
      }
    }
  }
  return round;
}

// The newest-version pod with the fewest replicas (ties: pod order) holding none of `shard`.
std::size_t emptiest_without(const Round& round, std::size_t shard) {
  std::size_t best = kNone;
  for (std::size_t p = 0; p < round.pods.size(); ++p) {
    if (!round.newest[p] || round.holds_shard(p, shard)) continue;
    if (best == kNone || round.load(p) < round.load(best)) best = p;
  }
  return best;
}

struct Planned {
  ReplicaMove move;
  std::size_t order = 0;  // keeps one shard's changes in the order they were decided
};

// Step 1. Returns whether anything was repaired.
bool repair(Round& round, std::size_t wanted, std::uint32_t factor, std::vector<Planned>& out) {
  const std::size_t before = out.size();
  auto emit = [&](std::size_t s, std::optional<PodId> from, std::optional<PodId> to) {
    out.push_back(Planned{ReplicaMove{round.shards[s], std::move(from), std::move(to)}, out.size()});
  };
  for (std::size_t s = 0; s < round.shards.size(); ++s) {
    for (const PodId* gone : round.gone[s]) {
      const std::size_t target = round.held[s].size() < wanted ? emptiest_without(round, s) : kNone;
      if (target == kNone) {
        emit(s, *gone, std::nullopt);
        continue;
      }
      round.held[s].push_back(target);
      round.holds[target].insert(s);
      emit(s, *gone, round.pods[target]->id);
    }
    while (round.held[s].size() < wanted) {
      const std::size_t target = emptiest_without(round, s);
      if (target == kNone) break;
      round.held[s].push_back(target);
      round.holds[target].insert(s);
      emit(s, std::nullopt, round.pods[target]->id);
    }
    while (round.held[s].size() > factor) {
      // The fullest pod's replica goes (ties: the later in the set), the owner only if it is alone.
      std::size_t drop = kNone;
      for (std::size_t i = 1; i < round.held[s].size(); ++i) {
        if (drop == kNone || round.load(round.held[s][i]) >= round.load(round.held[s][drop])) drop = i;
      }
      const std::size_t pod = round.held[s][drop];
      round.held[s].erase(round.held[s].begin() + static_cast<std::ptrdiff_t>(drop));
      round.holds[pod].erase(s);
      emit(s, round.pods[pod]->id, std::nullopt);
    }
  }
  return out.size() != before;
}

// Step 2.
void balance(Round& round, std::size_t shard_count, double rate, std::vector<Planned>& out) {
  const std::size_t pod_count = round.pods.size();
  const std::uint32_t cap = max_gain_per_round(shard_count, rate);
  std::vector<std::uint32_t> gained(pod_count, 0);
  std::vector<bool> losing(pod_count, false);
  std::vector<bool> moved(round.shards.size(), false);
  for (;;) {
    std::size_t target = kNone;
    for (std::size_t p = 0; p < pod_count; ++p) {
      if (losing[p] || gained[p] >= cap) continue;
      if (target == kNone || round.load(p) < round.load(target)) target = p;
    }
    if (target == kNone) return;
    // Sources, fullest first (ties: pod order); the first that has a shard to give gives it.
    std::vector<std::size_t> sources;
    for (std::size_t p = 0; p < pod_count; ++p) {
      if (gained[p] == 0 && round.load(p) >= round.load(target) + 2) sources.push_back(p);
    }
    std::sort(sources.begin(), sources.end(), [&](std::size_t a, std::size_t b) {
      if (round.load(a) != round.load(b)) return round.load(a) > round.load(b);
      return a < b;
    });
    bool done = false;
    for (std::size_t source : sources) {
      for (auto it = round.holds[source].rbegin(); it != round.holds[source].rend(); ++it) {
        const std::size_t s = *it;
        if (moved[s] || round.holds_shard(target, s)) continue;
        moved[s] = true;
        losing[source] = true;
        ++gained[target];
        round.holds[source].erase(s);
        round.holds[target].insert(s);
        std::replace(round.held[s].begin(), round.held[s].end(), source, target);
        out.push_back(
            Planned{ReplicaMove{round.shards[s], round.pods[source]->id, round.pods[target]->id}, out.size()});
        done = true;
        break;
      }
      if (done) break;
    }
    if (!done) return;
  }
}

}  // namespace

ReplicaPlan plan_replicas(std::span<const Pod> pods, const ReplicaMap& map, RoundKind kind,
                          const ReplicaOptions& options) {
  if (pods.empty() || map.shard_count() == 0 || options.replication_factor == 0) return {};
  if (options.replication_factor == 1 && at_most_one_replica(map)) return single_owner_plan(pods, map, kind, options);

  Round round = make_round(pods, map);
  const std::size_t wanted = std::min<std::size_t>(options.replication_factor, round.pods.size());
  std::vector<Planned> planned;
  const bool repaired = repair(round, wanted, options.replication_factor, planned);
  if (!repaired && kind == RoundKind::Regular && round.all_newest) {
    balance(round, round.shards.size(), options.rebalance_rate, planned);
  }
  std::sort(planned.begin(), planned.end(), [](const Planned& a, const Planned& b) {
    if (a.move.shard != b.move.shard) return a.move.shard < b.move.shard;
    return a.order < b.order;
  });
  ReplicaPlan plan;
  plan.moves.reserve(planned.size());
  for (Planned& p : planned) plan.moves.push_back(std::move(p.move));
  return plan;
}

}  // namespace elfin::assignment
