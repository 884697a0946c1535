// The replica rebalance (replica sets of `replication_factor` pods per shard): with a factor of 1 it
// is Shardcake's plan exactly; above 1, over seeded random pod sets, replicas are on distinct pods,
// counts end within one of each other, a joining pod only gains its share, and a leaving pod's
// replicas are replaced one for one. A failure names the seed that reproduces it.
#include <algorithm>
#include <random>
#include <set>

#include "assignment_test_support.hpp"

#include <elfin/assignment/replica_map.hpp>
#include <elfin/assignment/replica_rebalance.hpp>

using namespace assignment_test;

namespace {

ReplicaMap run_replica_round(const std::vector<Pod>& pods, const ReplicaMap& map, RoundKind kind,
                             const ReplicaOptions& options, ReplicaPlan* plan_out = nullptr) {
  ReplicaPlan plan = plan_replicas(pods, map, kind, options);
  INFO(fmt::format("{}", plan));
  auto next = map.apply(plan);
  REQUIRE(next.ok());
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return *next;
}

struct ReplicaConverged {
  ReplicaMap map;
  int rounds = 0;                  ///< rounds that changed something
  std::vector<ReplicaMove> moves;  ///< every change, in order
};

/// Regular rounds until one changes nothing; checks on the way that a balancing round moves each
/// shard at most once.
ReplicaConverged converge(const std::vector<Pod>& pods, ReplicaMap map, const ReplicaOptions& options) {
  ReplicaConverged result{std::move(map), 0, {}};
  for (;;) {
    ReplicaPlan plan;
    result.map = run_replica_round(pods, result.map, RoundKind::Regular, options, &plan);
    if (plan.empty()) return result;
    const bool balancing =
        std::all_of(plan.moves.begin(), plan.moves.end(), [](const ReplicaMove& m) { return m.from && m.to; });
    if (balancing) {
      std::set<ShardId> shards;
      for (const ReplicaMove& m : plan.moves) CHECK(shards.insert(m.shard).second);
    }
    result.moves.insert(result.moves.end(), plan.moves.begin(), plan.moves.end());
    REQUIRE(++result.rounds <= 2000);
  }
}

/// Every shard has `wanted` replicas, all on distinct pods of `pods`; returns each pod's count.
std::vector<std::size_t> check_placed(const ReplicaMap& map, const std::vector<Pod>& pods, std::size_t wanted) {
  std::map<PodId, std::size_t> counts;
  for (const Pod& p : pods) counts[p.id] = 0;
  for (const auto& [shard, replicas] : map.replica_sets()) {
    const std::set<PodId> distinct(replicas.begin(), replicas.end());
    const bool known =
        std::all_of(replicas.begin(), replicas.end(), [&](const PodId& id) { return counts.contains(id); });
    if (replicas.size() != wanted || distinct.size() != replicas.size() || !known) {
      FAIL(fmt::format("shard {}: {} replicas, {} distinct, all on live pods: {} (want {})", shard, replicas.size(),
                       distinct.size(), known, wanted));
    }
    for (const PodId& id : replicas) ++counts[id];
  }
  std::vector<std::size_t> result;
  for (const auto& [id, count] : counts) result.push_back(count);
  return result;
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("replica rebalance: with replication factor 1 the plan is Shardcake's exactly", "[assignment]") {
  for (unsigned seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    const int pod_count = std::uniform_int_distribution<int>(1, 40)(random);
    const int shard_count = std::uniform_int_distribution<int>(1, 500)(random);
    std::vector<Pod> live;
    for (int i = 1; i <= pod_count; ++i) {
      live.push_back(pod(i, std::uniform_int_distribution<int>(0, 9)(random) == 0 ? PodVersion{2} : PodVersion{1}));
    }
    std::map<ShardId, std::optional<PodId>> owners;
    for (int k = 0; k < shard_count; ++k) {
      const int roll = std::uniform_int_distribution<int>(0, 99)(random);
      std::optional<PodId> owner;
      if (roll < 10) {
        owner = pod(999).id;  // gone
      } else if (roll < 30) {
        owner = std::nullopt;
      } else {
        owner = live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(random)].id;
      }
      owners.emplace(static_cast<ShardId>(k), owner);
    }
    const AssignmentMap map = AssignmentMap::from_owners(std::move(owners), 7);
    const double rate = std::uniform_real_distribution<double>(0.001, 1.0)(random);
    for (RoundKind kind : {RoundKind::Regular, RoundKind::Immediate}) {
      const RebalancePlan shardcake = plan_rebalance(live, map, kind, RebalanceOptions{rate});
      const ReplicaPlan replicas = plan_replicas(live, ReplicaMap::from_assignment(map), kind, ReplicaOptions{1, rate});
      REQUIRE(replicas.moves.size() == shardcake.moves.size());
      for (std::size_t i = 0; i < shardcake.moves.size(); ++i) {
        CHECK(replicas.moves[i] ==
              ReplicaMove{shardcake.moves[i].shard, shardcake.moves[i].from, shardcake.moves[i].to});
      }
      // Applied, the owners are the map Shardcake's plan makes.
      CHECK(ReplicaMap::from_assignment(map).apply(replicas)->owners() == *map.apply(shardcake));
    }
  }
}

TEST_CASE("replica rebalance: a fresh map gets min(RF, pods) replicas per shard on distinct pods, counts within one",
          "[assignment]") {
  for (unsigned seed = 1; seed <= 100; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    const auto all = pods(std::uniform_int_distribution<int>(1, 12)(random));
    const auto shard_count = std::uniform_int_distribution<std::uint32_t>(1, 1024)(random);
    const auto factor = std::uniform_int_distribution<std::uint32_t>(2, 5)(random);
    const ReplicaOptions options{factor, 0.05};
    // The first round places every replica (a repair: no cap), the later ones only balance.
    ReplicaPlan first;
    const ReplicaMap placed =
        run_replica_round(all, ReplicaMap::unassigned(0, shard_count), RoundKind::Regular, options, &first);
    const std::size_t wanted = std::min<std::size_t>(factor, all.size());
    CHECK(first.moves.size() == shard_count * wanted);
    check_placed(placed, all, wanted);
    const auto converged = converge(all, placed, options);
    CHECK(spread(check_placed(converged.map, all, wanted)) <= 1);
  }
}

TEST_CASE("replica rebalance: a joining pod only gains, at most its share, and counts end within one", "[assignment]") {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    auto all = pods(std::uniform_int_distribution<int>(2, 10)(random));
    const auto shard_count = std::uniform_int_distribution<std::uint32_t>(10, 1024)(random);
    const auto factor = std::uniform_int_distribution<std::uint32_t>(2, 3)(random);
    const ReplicaOptions options{factor, 0.05};
    const auto before = converge(all, ReplicaMap::unassigned(0, shard_count), options);
    const std::size_t wanted_before = std::min<std::size_t>(factor, all.size());

    const Pod joining = pod(100);
    all.push_back(joining);
    const auto after = converge(all, before.map, options);
    const std::size_t wanted = std::min<std::size_t>(factor, all.size());
    CHECK(spread(check_placed(after.map, all, wanted)) <= 1);
    std::size_t gained = 0;
    for (const ReplicaMove& move : after.moves) {
      INFO(fmt::format("{}", move));
      REQUIRE(move.to == joining.id);  // nothing moves between the pods already there
      ++gained;
    }
    const std::size_t total = shard_count * wanted;
    if (wanted == wanted_before) {
      // Every replica it gets is moved from a pod above the new average: no move is wasted.
      CHECK(gained <= ceil_div(total, all.size()));
      CHECK(gained >= total / all.size());
    } else {
      CHECK(gained == shard_count);  // RF was above the pod count: each shard gains its missing replica here
    }
  }
}

TEST_CASE("replica rebalance: a leaving pod's replicas are replaced one for one in the next round", "[assignment]") {
  for (unsigned seed = 1; seed <= 100; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    auto all = pods(std::uniform_int_distribution<int>(3, 10)(random));
    const auto shard_count = std::uniform_int_distribution<std::uint32_t>(10, 1024)(random);
    const auto factor = std::uniform_int_distribution<std::uint32_t>(2, 3)(random);
    const ReplicaOptions options{factor, 0.05};
    const auto before = converge(all, ReplicaMap::unassigned(0, shard_count), options);

    const std::size_t leaving_index = std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(random);
    const Pod leaving = all[leaving_index];
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(leaving_index));
    const std::size_t held = before.map.shards_of(leaving.id).size();
    const bool found_dead = std::uniform_int_distribution<int>(0, 1)(random) == 1;
    // Either the manager dropped it from the map (unregistered, or the health check found it dead),
    // or the map still names it and only `pods` lacks it: both give one replacement per replica.
    const ReplicaMap start = found_dead ? before.map : before.map.without_pod(leaving.id);
    ReplicaPlan repair;
    const ReplicaMap repaired = run_replica_round(all, start, RoundKind::Immediate, options, &repair);
    const std::size_t wanted = std::min<std::size_t>(factor, all.size());
    if (all.size() >= factor) {
      CHECK(repair.moves.size() == held);
      for (const ReplicaMove& move : repair.moves) {
        CHECK(move.to.has_value());
        CHECK(move.from == (found_dead ? std::optional<PodId>(leaving.id) : std::nullopt));
      }
    } else {
      // Fewer pods than the factor: every remaining pod holds every shard already; only the
      // gone pod's entries are dropped.
      CHECK(repair.moves.size() == (found_dead ? held : 0));
      for (const ReplicaMove& move : repair.moves) CHECK_FALSE(move.to.has_value());
    }
    check_placed(repaired, all, wanted);
    // The replacements went to the emptiest pods that may take them; where the surviving replicas
    // leave only crowded pods to choose from, balancing evens it out afterwards, with fewer moves
    // than the repair made.
    const auto after = converge(all, repaired, options);
    CHECK(spread(check_placed(after.map, all, wanted)) <= 1);
    CHECK(after.moves.size() <= held);
  }
}

TEST_CASE("replica rebalance: with fewer pods than the factor each shard has one replica per pod", "[assignment]") {
  auto all = pods(2);
  const ReplicaOptions options{3, 0.02};
  auto map = converge(all, ReplicaMap::unassigned(0, 64), options).map;
  check_placed(map, all, 2);
  all.push_back(pod(3));
  ReplicaPlan plan;
  map = run_replica_round(all, map, RoundKind::Immediate, options, &plan);
  CHECK(plan.moves.size() == 64);  // the third replica of every shard, at once (a repair)
  check_placed(map, all, 3);
  all.push_back(pod(4));
  CHECK(spread(check_placed(converge(all, map, options).map, all, 3)) <= 1);
}

TEST_CASE("replica rebalance: a lowered factor drops the extra replicas and keeps each owner", "[assignment]") {
  const auto all = pods(4);
  const auto three = converge(all, ReplicaMap::unassigned(0, 100), ReplicaOptions{3, 0.05}).map;
  const auto two = converge(all, three, ReplicaOptions{2, 0.05}).map;
  check_placed(two, all, 2);
  for (const auto& [shard, replicas] : two.replica_sets()) CHECK(replicas.front() == three.owner(shard));
  // Down to 1: the owners stay, and from then on it is Shardcake's single-owner plan.
  const auto one = converge(all, two, ReplicaOptions{1, 0.05}).map;
  check_placed(one, all, 1);
  CHECK(spread(loads(one.owners(), all)) <= 1);
}

TEST_CASE("replica rebalance: during a rolling update new replicas go to the newest pods and nothing is balanced",
          "[assignment]") {
  std::vector<Pod> old_pods = pods(3, {1});
  auto map = converge(old_pods, ReplicaMap::unassigned(0, 60), ReplicaOptions{2, 1.0}).map;
  std::vector<Pod> mixed = old_pods;
  mixed.push_back(pod(10, {2}));
  // Balanced already: an unbalanced new pod gets nothing while versions are mixed.
  CHECK(plan_replicas(mixed, map, RoundKind::Regular, ReplicaOptions{2, 1.0}).empty());
  // A pod of the old version leaves: its replicas go to the new-version pod only.
  mixed.erase(mixed.begin());
  const ReplicaPlan repair = plan_replicas(mixed, map, RoundKind::Immediate, ReplicaOptions{2, 1.0});
  REQUIRE_FALSE(repair.empty());
  for (const ReplicaMove& move : repair.moves) CHECK(move.to == pod(10, {2}).id);
}

TEST_CASE("replica map: a move keeps the replica's place, so the owner stays first unless it moves", "[assignment]") {
  const PodId a = pod(1).id, b = pod(2).id, c = pod(3).id, d = pod(4).id;
  const ReplicaMap map = ReplicaMap::from_replicas({{0, {a, b, c}}, {1, {b}}}, 5);
  auto next = map.apply(ReplicaPlan{{ReplicaMove{0, b, d}, ReplicaMove{1, std::nullopt, a}}});
  REQUIRE(next);
  CHECK(next->epoch() == 6);
  CHECK(next->replicas(0) == std::vector<PodId>{a, d, c});
  CHECK(next->replicas(1) == std::vector<PodId>{b, a});
  CHECK(next->owners().owner(1) == b);
  CHECK(map.apply(ReplicaPlan{{ReplicaMove{0, std::nullopt, c}}}).error() ==
        PlanError{PlanErrorKind::ReplicaPresent, 0});
  CHECK(map.apply(ReplicaPlan{{ReplicaMove{1, a, c}}}).error() == PlanError{PlanErrorKind::StaleOwner, 1});
  CHECK(map.apply(ReplicaPlan{{ReplicaMove{9, std::nullopt, c}}}).error() == PlanError{PlanErrorKind::UnknownShard, 9});
  const ReplicaMap without = map.without_pod(a);
  CHECK(without.epoch() == 6);
  CHECK(without.replicas(0) == std::vector<PodId>{b, c});
  CHECK(without.owner(0) == b);
  CHECK(map.without_pod(d) == map);
  CHECK(fmt::format("{}", map) ==
        "epoch 5, 2 shards, 4 replicas: pod-001:54321#1 holds 1 (0); pod-002:54321#1 holds 2 (0-1); "
        "pod-003:54321#1 holds 1 (0)");
}
