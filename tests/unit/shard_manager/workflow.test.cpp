// The shard manager's workflow with fake pods on virtual time (the sharding study's §4.3): who
// gets shards when, what happens to the shards of pods that leave, die or cannot be reached, and
// the invariants every test checks at its end — no shard held by two pods, no assignment or
// notification before its map was saved.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cluster.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using elfin::protocols::sharding::ShardingErrorKind;
using elfin::test::Cluster;

namespace {

void check_invariants(Cluster& cluster) {
  const auto violations = cluster.world().violations();
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
}

// 64 shards; a regular round may move up to 32 to one pod, so two pods balance in one round.
constexpr const char* kSmall = "shard_function = \"jump-xxh64/1:64\"\nrebalance_rate = 0.5";

/// Where most tests start: pods 1 and 2 joined, then `rounds` regular rounds (20 s each), 32 of
/// kSmall's shards each.
void two_balanced_pods(Cluster& cluster, int rounds = 1) {
  REQUIRE(cluster.join(1));
  REQUIRE(cluster.join(2));
  cluster.settle();
  for (int round = 0; round < rounds; ++round) cluster.advance(20s);
  REQUIRE(cluster.owned(cluster.pod(1)) == 32);
  REQUIRE(cluster.owned(cluster.pod(2)) == 32);
}

/// Pod `n` stops answering while the health authority still sees it alive (a suspect, not dead);
/// a sender reports it and its ping times out.
void pod_unreachable_but_alive(Cluster& cluster, int n) {
  cluster.world().set_behaviour(n, {.answer_pings = false, .answer_commands = false});
  cluster.health().set(cluster.pod(n), elfin::actors::shard_manager::Health::Alive);
  cluster.report(cluster.pod(n));
  cluster.advance(3s);  // ping_timeout
}

/// Makes every save of the storage fail (`fail`) or report another writer (`conflict`).
void set_storage(Cluster& cluster, bool fail, bool conflict) {
  std::lock_guard lock(cluster.control().mutex);
  cluster.control().fail = fail;
  cluster.control().conflict = conflict;
}

/// Another writer appears while pod 2 unregisters: the manager refuses to fork the map and
/// fails; its restart (after the restart backoff) starts from what is stored.
void restart_manager_by_conflict(Cluster& cluster) {
  set_storage(cluster, false, true);
  CHECK_FALSE(cluster.proxy().request_fallible(elfin::protocols::sharding::Unregister{cluster.pod(2)}));
  set_storage(cluster, false, false);
  cluster.advance(1s);
}
constexpr const char* kShardcake = R"(shard_function = "shardcake/1:300")";

}  // namespace

TEST_CASE("shard manager: the first register assigns every shard to that pod, saved before assigned",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  const auto before = cluster.assignments();
  CHECK(before.pods.empty());
  CHECK(before.owners.size() == 64);

  auto registered = cluster.join(1);
  REQUIRE(registered);
  cluster.settle();

  const auto map = cluster.assignments();
  CHECK(map.shards_of(cluster.pod(1)).size() == 64);
  CHECK(map.epoch > before.epoch);
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 64);
  // Notified of the map it got, which was saved first (the World checks the order).
  CHECK(cluster.world().notified_epoch(cluster.pod(1)) == map.epoch);
  CHECK(cluster.world().saved_epoch() == map.epoch);
  const auto events = cluster.world().events();
  auto save = std::find(events.begin(), events.end(), fmt::format("save epoch {}", map.epoch));
  auto assign =
      std::find_if(events.begin(), events.end(), [](const std::string& e) { return e.starts_with("assign"); });
  REQUIRE(save != events.end());
  REQUIRE(assign != events.end());
  CHECK(save < assign);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a pod with another shard function is refused with both functions named", "[shard_manager]") {
  Cluster cluster(kSmall);
  auto refused = cluster.join(1, "1.0.0", 1, "jump-xxh64/1:1024");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ShardingErrorKind::ShardFunctionMismatch);
  CHECK(refused.error().detail.find("jump-xxh64/1:1024") != std::string::npos);
  CHECK(refused.error().detail.find("jump-xxh64/1:64") != std::string::npos);
  CHECK(cluster.assignments().pods.empty());
}

TEST_CASE("shard manager: pods joining get shards at regular rounds, at most ceil(N x rebalance_rate) each",
          "[shard_manager]") {
  // Shardcake's simulation: 20 pods hold 15 of 300 shards each; 5 join; after one interval each
  // newcomer holds 6 (the cap), after 60 s more everyone holds 12.
  Cluster cluster(kShardcake);
  for (std::uint32_t key = 1; key <= 20; ++key) REQUIRE(cluster.join(key));
  cluster.settle();
  // All shards went to pod 1 at once; regular rounds even them out (6 per pod per round).
  for (int round = 0; round < 10; ++round) cluster.advance(20s);
  for (std::uint32_t key = 1; key <= 20; ++key) REQUIRE(cluster.owned(cluster.pod(key)) == 15);

  for (std::uint32_t key = 21; key <= 25; ++key) REQUIRE(cluster.join(key));
  cluster.settle();
  for (std::uint32_t key = 21; key <= 25; ++key) CHECK(cluster.owned(cluster.pod(key)) == 0);
  cluster.advance(20s);
  for (std::uint32_t key = 21; key <= 25; ++key) CHECK(cluster.owned(cluster.pod(key)) == 6);
  cluster.advance(60s);
  for (std::uint32_t key = 1; key <= 25; ++key) CHECK(cluster.owned(cluster.pod(key)) == 12);
  for (std::uint32_t key = 1; key <= 25; ++key) CHECK(cluster.world().held_by(cluster.pod(key)).size() == 12);
  check_invariants(cluster);
}

TEST_CASE("shard manager: an unregistered pod's shards move to the others at once", "[shard_manager]") {
  // 25 -> 20 pods: 15 each without any time passing (Shardcake: within 1 s).
  Cluster cluster(kShardcake);
  for (std::uint32_t key = 1; key <= 25; ++key) REQUIRE(cluster.join(key));
  cluster.settle();
  for (int round = 0; round < 12; ++round) cluster.advance(20s);
  for (std::uint32_t key = 1; key <= 25; ++key) REQUIRE(cluster.owned(cluster.pod(key)) == 12);

  for (std::uint32_t key = 21; key <= 25; ++key) REQUIRE(cluster.leave(key));
  cluster.settle();
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 20);
  for (std::uint32_t key = 1; key <= 20; ++key) CHECK(map.shards_of(cluster.pod(key)).size() == 15);
  auto unknown = cluster.leave(25);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == ShardingErrorKind::UnknownPod);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a dead pod loses its shards once the health check says so", "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster, 6);

  cluster.kill(2);  // no unregister: its address now reaches no one
  cluster.settle();
  CHECK(cluster.owned(cluster.pod(2)) == 32);  // nothing happens until someone notices
  cluster.report(cluster.pod(2));
  cluster.settle();
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 1);
  CHECK(map.shards_of(cluster.pod(1)).size() == 64);
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 64);
  check_invariants(cluster);
}

TEST_CASE("shard manager: an alive but unreachable pod keeps its shards", "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster, 6);

  pod_unreachable_but_alive(cluster, 2);
  CHECK(cluster.owned(cluster.pod(2)) == 32);

  // A newcomer's rounds do not take shards from it either (moves touching it are dropped).
  REQUIRE(cluster.join(3));
  for (int round = 0; round < 4; ++round) cluster.advance(20s);
  CHECK(cluster.owned(cluster.pod(2)) == 32);
  CHECK(cluster.assignments().pods.size() == 3);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a pod that does not answer pings, with no other authority, keeps its shards too",
          "[shard_manager]") {
  // The direct check: no answer within ping_timeout is "unknown", which counts as alive.
  Cluster cluster(kSmall);
  two_balanced_pods(cluster, 6);
  cluster.world().set_behaviour(2, {.answer_pings = false});
  cluster.report(cluster.pod(2));
  cluster.advance(3s);
  CHECK(cluster.owned(cluster.pod(2)) == 32);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a failed unassign keeps the shards with their owner and gives that pod nothing",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  REQUIRE(cluster.join(1));
  cluster.settle();
  REQUIRE(cluster.owned(cluster.pod(1)) == 64);
  // Pod 1 answers pings but never finishes stopping entities.
  cluster.world().set_behaviour(1, {.answer_pings = true, .answer_commands = false});
  REQUIRE(cluster.join(2));
  cluster.advance(20s);  // the round's unassign waits...
  cluster.advance(10s);  // ...handoff_timeout, then gives up on those moves
  auto map = cluster.assignments();
  CHECK(map.shards_of(cluster.pod(1)).size() == 64);
  CHECK(map.shards_of(cluster.pod(2)).empty());
  CHECK(cluster.world().held_by(cluster.pod(2)).empty());

  // Once pod 1 cooperates again, the retry pings it (no longer suspect) and the next regular
  // round moves what it should.
  cluster.world().set_behaviour(1, {});
  cluster.advance(30s);
  CHECK(cluster.owned(cluster.pod(2)) > 0);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a refused assign leaves the shards unassigned for the next round", "[shard_manager]") {
  Cluster cluster(kSmall);
  cluster.spawn(1, cluster.pod(1));
  cluster.world().set_behaviour(1, {.refuse_assigns = true});
  REQUIRE(cluster.register_pod(cluster.pod(1), cluster.endpoint(1), "1.0.0"));
  cluster.settle();
  CHECK(cluster.owned(cluster.pod(1)) == 0);
  CHECK(cluster.world().held_by(cluster.pod(1)).empty());
  cluster.world().set_behaviour(1, {});
  cluster.advance(10s);  // rebalance_retry_interval
  CHECK(cluster.owned(cluster.pod(1)) == 64);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a failing storage stops acknowledgements and never forks the map", "[shard_manager]") {
  Cluster cluster(kSmall);
  REQUIRE(cluster.join(1));
  cluster.settle();
  const auto before = cluster.assignments();
  REQUIRE(before.shards_of(cluster.pod(1)).size() == 64);

  set_storage(cluster, true, false);
  // Nothing that needs a save is acknowledged.
  auto registered = cluster.join(2);
  REQUIRE_FALSE(registered);
  CHECK(registered.error().kind == ShardingErrorKind::StorageUnavailable);
  auto left = cluster.leave(1);
  REQUIRE_FALSE(left);
  CHECK(left.error().kind == ShardingErrorKind::StorageUnavailable);
  CHECK(cluster.assignments() == before);

  // With storage back, pod 2 joins; its round then meets a failing storage after the unassign:
  // nothing is assigned from the unsaved map, and the round waits for the storage.
  set_storage(cluster, false, false);
  REQUIRE(cluster.join(2));
  set_storage(cluster, true, false);
  cluster.advance(20s);
  CHECK(cluster.world().held_by(cluster.pod(2)).empty());
  CHECK(cluster.assignments().epoch == before.epoch);
  cluster.advance(3s);  // persist_retry_interval: fails again
  CHECK(cluster.world().held_by(cluster.pod(2)).empty());
  set_storage(cluster, false, false);
  cluster.advance(3s);
  const auto after = cluster.assignments();
  CHECK(after.epoch > before.epoch);
  CHECK_FALSE(after.shards_of(cluster.pod(2)).empty());
  CHECK(cluster.world().held_by(cluster.pod(2)).size() == after.shards_of(cluster.pod(2)).size());
  // What is stored is exactly what the manager serves.
  elfin::actors::shard_manager::FileStorage file(cluster.storage_path());
  auto stored = file.load();
  REQUIRE(stored);
  REQUIRE(stored->has_value());
  CHECK((*stored)->assignments == after);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a restarted manager reloads the saved map, bumps the epoch and moves nothing",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster, 6);
  const auto before = cluster.assignments();
  REQUIRE(before.shards_of(cluster.pod(1)).size() == 32);
  const auto assigns_before = cluster.world().assigns().size();

  restart_manager_by_conflict(cluster);
  const auto after = cluster.assignments();
  CHECK(after.epoch > before.epoch);
  CHECK(after.pods == before.pods);
  CHECK(after.owners == before.owners);
  // Each live pod was sent its own shards again, at the new epoch; none moved.
  const auto assigns = cluster.world().assigns();
  REQUIRE(assigns.size() == assigns_before + 2);
  for (std::size_t i = assigns_before; i < assigns.size(); ++i) {
    CHECK(assigns[i].epoch == after.epoch);
    CHECK(assigns[i].shards.size() == 32);
  }
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 32);
  CHECK(cluster.world().held_by(cluster.pod(2)).size() == 32);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a recycled address gets none of the old incarnation's shards until it is found dead",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  REQUIRE(cluster.join(1));
  cluster.settle();
  REQUIRE(cluster.owned(cluster.pod(1, 1)) == 64);

  // The process at 10.0.0.1 restarts: a new actor, a new incarnation, the same address.
  cluster.kill(1);
  cluster.settle();
  const auto endpoint = cluster.spawn(101, cluster.pod(1, 2));
  auto registered = cluster.register_pod(cluster.pod(1, 2), endpoint, "1.0.0");
  REQUIRE(registered);
  // At its registration it owned nothing: the old incarnation's shards are not its own.
  CHECK(registered->assignments.shards_of(cluster.pod(1, 2)).empty());
  CHECK(registered->assignments.shards_of(cluster.pod(1, 1)).size() == 64);
  cluster.settle();
  // The old incarnation did not answer its health check: removed, and the shards were placed anew.
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 1);
  CHECK(map.shards_of(cluster.pod(1, 2)).size() == 64);
  for (const auto& assign : cluster.world().assigns()) {
    if (assign.pod == cluster.pod(1, 2)) CHECK(assign.epoch > registered->assignments.epoch);
  }
  // The old process coming back is refused.
  auto stale = cluster.register_pod(cluster.pod(1, 1), endpoint, "1.0.0");
  REQUIRE_FALSE(stale);
  CHECK(stale.error().kind == ShardingErrorKind::StaleIncarnation);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a rolling update gives no shard to an old version while a new one exists",
          "[shard_manager]") {
  Cluster cluster(kShardcake);
  for (std::uint32_t key = 1; key <= 3; ++key) REQUIRE(cluster.join(key, "1.0.0"));
  cluster.settle();
  for (int round = 0; round < 20; ++round) cluster.advance(20s);
  REQUIRE(cluster.owned(cluster.pod(1)) == 100);

  std::set<elfin::protocols::sharding::PodRef> old_pods{cluster.pod(1), cluster.pod(2), cluster.pod(3)};
  const auto assigns_before = cluster.world().assigns().size();
  std::map<std::uint32_t, int> moves;  // per shard, during the update
  for (std::uint32_t i = 0; i < 3; ++i) {
    REQUIRE(cluster.join(11 + i, "2.0.0"));
    cluster.advance(20s);  // a regular round while versions are mixed: nothing moves
    REQUIRE(cluster.leave(1 + i));
    cluster.settle();
  }
  const auto assigns = cluster.world().assigns();
  for (std::size_t i = assigns_before; i < assigns.size(); ++i) {
    CHECK_FALSE(old_pods.contains(assigns[i].pod));  // nothing to v1 once a v2 pod existed
    for (auto shard : assigns[i].shards) ++moves[shard];
  }
  // Every shard moved exactly once in the whole update (each replaced pod's shards went straight
  // to a new-version pod).
  CHECK(moves.size() == 300);
  for (const auto& [shard, count] : moves) CHECK(count == 1);
  std::size_t total = 0;
  for (std::uint32_t i = 0; i < 3; ++i) total += cluster.owned(cluster.pod(11 + i));
  CHECK(total == 300);
  // Once only v2 runs, regular rounds even the load out.
  for (int round = 0; round < 20; ++round) cluster.advance(20s);
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(cluster.owned(cluster.pod(11 + i)) == 100);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a pod found dead by a rebalance round loses its shards, the others keep theirs",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster);
  const auto pod1_before = cluster.assignments().shards_of(cluster.pod(1));

  cluster.kill(2);
  REQUIRE(cluster.join(3));  // the next regular round plans moves from pods 1 and 2 to pod 3
  cluster.advance(20s);
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 2);
  CHECK(map.shards_of(cluster.pod(1)).size() + map.shards_of(cluster.pod(3)).size() == 64);
  CHECK(map.shards_of(cluster.pod(2)).empty());
  // Pod 1 lost nothing but what the plan gave pod 3; none of pod 1's shards went anywhere else.
  for (auto shard : pod1_before) {
    const auto owner = map.owner(shard);
    REQUIRE(owner);
    CHECK((owner->pod == cluster.pod(1) || owner->pod == cluster.pod(3)));
  }
  CHECK(cluster.metric("elfin_shard_manager_pods_found_dead_total") == 1);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a pod the health check calls dead cannot register", "[shard_manager]") {
  Cluster cluster(kSmall);
  cluster.health().set(cluster.pod(1), elfin::actors::shard_manager::Health::Dead);
  auto refused = cluster.join(1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ShardingErrorKind::PodDead);
  CHECK(cluster.assignments().pods.empty());
}

TEST_CASE("shard manager: metrics count pods, shards per pod, unassigned shards, rounds and health checks",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  CHECK(cluster.metric("elfin_shard_manager_unassigned_shards") == 64);
  two_balanced_pods(cluster);
  CHECK(cluster.metric("elfin_shard_manager_pods") == 2);
  CHECK(cluster.metric("elfin_shard_manager_unassigned_shards") == 0);
  CHECK(cluster.metric("elfin_shard_manager_shards_per_pod_min") == 32);
  CHECK(cluster.metric("elfin_shard_manager_shards_per_pod_max") == 32);
  CHECK(cluster.metric("elfin_shard_manager_rebalances_total") == 2);  // the first register's, one regular
  CHECK(cluster.histogram_count("elfin_shard_manager_rebalance_seconds") == 2);
  CHECK(cluster.metric("elfin_shard_manager_shard_moves_total") == 64 + 32);
  CHECK(cluster.metric("elfin_shard_manager_epoch") == static_cast<double>(cluster.assignments().epoch));
  CHECK(cluster.metric("elfin_shard_manager_health_checks_total") == 2);  // one per register
}

TEST_CASE("shard manager: a register, unregister and kill storm keeps one owner per shard and converges",
          "[shard_manager]") {
  // Pods come and go for 5 virtual minutes, gracefully or killed; after every step no shard is
  // held by two pods, and once the storm ends every shard is assigned and the load is even.
  Cluster cluster(kShardcake);
  std::mt19937 random(20261125);
  std::set<std::uint32_t> alive;
  std::uint32_t next_key = 1;
  for (int step = 0; step < 60; ++step) {
    const auto roll = random() % 10;
    if (alive.size() < 2 || (roll < 5 && alive.size() < 10)) {
      REQUIRE(cluster.join(next_key));
      alive.insert(next_key++);
    } else if (roll < 8) {
      auto it = std::next(alive.begin(), static_cast<long>(random() % alive.size()));
      REQUIRE(cluster.leave(*it));
      alive.erase(it);
    } else {
      auto it = std::next(alive.begin(), static_cast<long>(random() % alive.size()));
      cluster.kill(*it);
      cluster.report(cluster.pod(*it));
      alive.erase(it);
    }
    cluster.advance(5s);
    const auto violations = cluster.world().violations();
    for (const auto& v : violations) UNSCOPED_INFO(v);
    REQUIRE(violations.empty());
  }
  for (int round = 0; round < 30; ++round) cluster.advance(20s);
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == alive.size());
  std::size_t lowest = 300;
  std::size_t highest = 0;
  std::size_t total = 0;
  for (auto key : alive) {
    const auto n = map.shards_of(cluster.pod(key)).size();
    CHECK(cluster.world().held_by(cluster.pod(key)).size() == n);
    lowest = std::min(lowest, n);
    highest = std::max(highest, n);
    total += n;
  }
  CHECK(total == 300);
  CHECK(highest - lowest <= 1);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a manager that dies between unassign and persist leaves no shard with two owners",
          "[shard_manager]") {
  // The worst moment: the old owner has stopped the shards, the new map is not stored. The
  // restarted manager knows only the stored map, so the shards go back to their old owner (it is
  // sent its whole set again, at a new epoch) and the new pod has none until a round moves them.
  Cluster cluster(kSmall);
  REQUIRE(cluster.join(1));
  cluster.settle();
  REQUIRE(cluster.world().held_by(cluster.pod(1)).size() == 64);
  REQUIRE(cluster.join(2));
  set_storage(cluster, false, true);  // the save after the unassign fails the manager
  cluster.advance(20s);
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 32);  // unassigned, not yet reassigned
  CHECK(cluster.world().held_by(cluster.pod(2)).empty());
  set_storage(cluster, false, false);
  cluster.advance(1s);  // the restart backoff: the manager loads the stored map and resends it
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 64);
  CHECK(cluster.world().held_by(cluster.pod(2)).empty());
  check_invariants(cluster);

  cluster.advance(20s);  // and the next regular round moves what it should, properly
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 32);
  CHECK(cluster.world().held_by(cluster.pod(2)).size() == 32);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a dead pod nobody reports is found by the periodic health check", "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster);
  cluster.kill(2);  // no report, and balanced rounds do not involve it
  cluster.advance(20s);
  CHECK(cluster.owned(cluster.pod(2)) == 32);
  cluster.advance(20s);  // 60 s since the start: health_check_interval
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 1);
  CHECK(map.shards_of(cluster.pod(1)).size() == 64);
  check_invariants(cluster);
}

TEST_CASE("shard manager: with Redis storage, a restarted manager reloads the map from Redis and moves nothing",
          "[shard_manager]") {
  elfin::test::RedisServer redis;
  Cluster cluster(kSmall, redis.port());
  two_balanced_pods(cluster);
  const auto before = cluster.assignments();
  REQUIRE(before.shards_of(cluster.pod(1)).size() == 32);
  restart_manager_by_conflict(cluster);
  const auto after = cluster.assignments();
  CHECK(after.epoch > before.epoch);
  CHECK(after.owners == before.owners);
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 32);
  CHECK(cluster.world().held_by(cluster.pod(2)).size() == 32);
  // What Redis holds is what the manager serves.
  elfin::actors::shard_manager::RedisOptions options;
  options.port = redis.port();
  auto stored = elfin::actors::shard_manager::RedisStorage(options).load();
  REQUIRE(stored);
  REQUIRE(stored->has_value());
  CHECK((*stored)->assignments == after);
  check_invariants(cluster);
}

TEST_CASE("shard manager: while a pod is unreachable regular rounds move nothing, orphans are still placed",
          "[shard_manager]") {
  Cluster cluster(kSmall);
  two_balanced_pods(cluster, 6);
  pod_unreachable_but_alive(cluster, 2);

  // A newcomer: a balancing round would move 16 of pod 1's shards to it (pod 2's moves are
  // dropped with its failed ping). While pod 2 is suspect no regular round balances.
  REQUIRE(cluster.join(3));
  cluster.settle();
  const double moves = cluster.metric("elfin_shard_manager_shard_moves_total");
  for (int round = 0; round < 3; ++round) cluster.advance(20s);
  CHECK(cluster.owned(cluster.pod(1)) == 32);
  CHECK(cluster.owned(cluster.pod(2)) == 32);
  CHECK(cluster.owned(cluster.pod(3)) == 0);
  CHECK(cluster.metric("elfin_shard_manager_shard_moves_total") == moves);

  // Orphans never wait: pod 1 leaves, and its shards go at once to the least loaded pod, 3.
  REQUIRE(cluster.leave(1));
  cluster.settle();
  const auto map = cluster.assignments();
  CHECK(std::count(map.owners.begin(), map.owners.end(), -1) == 0);
  CHECK(map.shards_of(cluster.pod(3)).size() == 32);
  CHECK(map.shards_of(cluster.pod(2)).size() == 32);
  CHECK(cluster.world().held_by(cluster.pod(3)).size() == 32);

  // Once the suspect answers a ping again, balancing resumes: the tick pings it, the next one balances.
  cluster.world().set_behaviour(2, {});
  REQUIRE(cluster.join(4));
  cluster.settle();
  cluster.advance(20s);
  cluster.advance(20s);
  CHECK(cluster.owned(cluster.pod(4)) > 0);
  check_invariants(cluster);
}

TEST_CASE("shard manager: a killed pod a sender reports loses its shards within ping_timeout plus one round",
          "[shard_manager]") {
  // The bound of the sharding study: ping_timeout (the health check the report starts) + the
  // health authority's own delay (none here: it is asked when the ping ends) + one rebalance
  // round (its pings, its unassigns and its assigns, each bounded by its timeout).
  Cluster cluster(std::string(kSmall) + "\nping_timeout = \"2s\"\nhandoff_timeout = \"4s\"");
  two_balanced_pods(cluster);
  constexpr auto ping_timeout = 2s;
  constexpr auto handoff_timeout = 4s;
  constexpr auto bound = ping_timeout + (ping_timeout + 2 * handoff_timeout);

  SECTION("the process is gone: its address reaches no one") { cluster.kill(2); }
  SECTION("the host hangs: pings go unanswered and the health authority says dead") {
    cluster.world().set_behaviour(2, {.answer_pings = false, .answer_commands = false});
    cluster.world().on_death(cluster.pod(2));
    cluster.health().set(cluster.pod(2), elfin::actors::shard_manager::Health::Dead);
  }
  cluster.settle();
  cluster.report(cluster.pod(2));  // a sender found it unreachable
  auto elapsed = 0ms;
  constexpr auto step = 100ms;
  while (cluster.owned(cluster.pod(1)) != 64 && elapsed <= 2 * bound) {
    cluster.advance(step);
    elapsed += step;
  }
  INFO("recovered after " << elapsed.count() << " ms of virtual time; bound "
                          << std::chrono::milliseconds(bound).count() << " ms");
  CHECK(elapsed <= bound);
  const auto map = cluster.assignments();
  CHECK(map.pods.size() == 1);
  CHECK(map.shards_of(cluster.pod(1)).size() == 64);
  CHECK(cluster.world().held_by(cluster.pod(1)).size() == 64);
  check_invariants(cluster);
}
