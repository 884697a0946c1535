// The KV service under process faults, checked for linearizability: a three-pod cluster
// (`elfin kv cluster start`, real processes on loopback) serves concurrent clients doing a random
// mix of put, get, cas, delete and delete_if_version over a few keys in two shards
// (support/kv_workload.hpp records every operation), while one fault scenario runs; then every key
// is read once more, and the history is checked per key: zero violations, no acknowledged write
// lost. The scenarios: a pod killed with SIGKILL and restarted; the leader of the hot shards killed
// again and again; a rolling restart of every pod; the leader paused (SIGSTOP) and resumed. With a
// shard manager (replication factor 3): the manager killed mid-run (the pods serve without it, a
// pod killed and restarted meanwhile, and once restarted it places replicas on a pod added
// after); a fourth pod added mid-run, its share of replicas moved to it by Raft membership changes;
// one of four pods removed gracefully mid-run (`elfin kv cluster remove`: its replicas move off
// before it stops).
//
// Longer runs: ELFIN_KV_FAULTS_ROUNDS=<n> repeats each scenario's fault n times (default 1; the
// leader kills 2), ELFIN_KV_FAULTS_CLIENTS=<n> sets the clients (default 4),
// ELFIN_KV_FAULTS_STATS=1 prints what each scenario did and how long it took.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/kv.hpp>
#include <elfin/kv/client.hpp>
#include <elfin/linearizability/checker.hpp>

#include "../unit/eventually.hpp"
#include "kv_local_cluster.hpp"
#include "kv_workload.hpp"

using namespace std::chrono_literals;
namespace lin = elfin::linearizability;
using elfin::test::eventually;
using elfin::test::KvLocalCluster;
using elfin::test::KvWorkload;
using elfin::test::PartitionStatusProbe;

namespace {

/// Few shards: the pods create each shard's Raft group on first use, which is not what this is about.
constexpr std::uint32_t kShards = 16;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr || *value == '\0' ? fallback : std::strtoull(value, nullptr, 10);
}

/// The cluster a scenario runs on and the keys its clients use.
struct Setup {
  std::uint16_t pods = 3;
  /// 0: no manager, every pod holds every shard; 3: a shard manager places each shard on 3 pods.
  std::uint32_t replication_factor = 0;
  std::uint16_t spare_pods = 0;  ///< for pods added mid-run
  std::size_t key_shards = 2;    ///< the hot shards
  int keys_per_shard = 3;
};

/// `key_shards` x `keys_per_shard` keys: the hot shards.
std::vector<std::string> hot_keys(std::vector<std::uint64_t>& shards, const Setup& setup) {
  std::vector<std::string> keys;
  std::map<std::uint64_t, int> per_shard;
  const auto wanted = setup.key_shards * static_cast<std::size_t>(setup.keys_per_shard);
  for (int i = 0; keys.size() < wanted; ++i) {
    std::string key = fmt::format("f:{}", i);
    const auto shard = elfin::actors::kv::shard_of(key, kShards);
    if (per_shard.size() == setup.key_shards && !per_shard.contains(shard)) continue;
    if (per_shard[shard] == setup.keys_per_shard) continue;
    ++per_shard[shard];
    keys.push_back(std::move(key));
  }
  for (const auto& [shard, count] : per_shard) shards.push_back(shard);
  return keys;
}

struct Fault {
  KvLocalCluster& cluster;
  KvWorkload& load;
  PartitionStatusProbe& probe;
  std::vector<std::uint64_t> shards;  ///< the hot shards
  std::size_t rounds = 1;

  /// The pod leading hot shard `i`, once one does.
  std::uint16_t leader(std::size_t i) {
    const std::uint16_t pod = probe.leader(shards.at(i % shards.size()), 20s);
    REQUIRE(pod != 0);
    return pod;
  }
  /// The clients keep being answered.
  void progress(std::size_t more) {
    INFO("the clients got no " << more << " more answers within 30 s");
    REQUIRE(load.progress(more, 30s));
  }
  /// `elfin kv cluster start` brings back the pods that are not running; `pod` serves again.
  void restart(std::uint16_t pod) {
    const auto restarted = cluster.start_again();
    INFO(restarted.out << restarted.err);
    REQUIRE(restarted.code == 0);
    REQUIRE(cluster.serves(pod, 30s));
  }
  /// With a manager: a pod more (`elfin kv cluster start` with one more), which then holds
  /// `replicas` replicas in the manager's map and as a voter of their Raft groups: the leaders
  /// added it as a learner, it caught up from a snapshot, and they promoted it.
  void add_pod(std::uint16_t replicas) {
    const auto added = cluster.add_pod();
    INFO(added.out << added.err);
    REQUIRE(added.code == 0);
    const std::uint16_t pod = cluster.size();
    const std::string name = fmt::format("kv-pod-{}", pod);
    REQUIRE(eventually([&] { return cluster.replica_counts()[name] == replicas; }, 30s));
    PartitionStatusProbe all(cluster.pods(), 60051);
    REQUIRE(eventually(
        [&] {
          std::uint16_t held = 0;
          for (std::uint64_t shard = 0; shard < kShards; ++shard) {
            const auto voters = all.voters(pod, shard);
            held += voters.size() == 3 && std::find(voters.begin(), voters.end(), pod) != voters.end();
          }
          return held == replicas;
        },
        30s));
  }
  /// With a manager: pod `pod` removed gracefully (`elfin kv cluster remove`): it leaves the
  /// manager's map, its replicas move to the other pods (which then hold every shard, as
  /// voters), and only then is it stopped.
  void remove_pod(std::uint16_t pod) {
    const auto removed = cluster.remove_pod(pod);
    INFO(removed.out << removed.err);
    REQUIRE(removed.code == 0);
    CHECK(cluster.pid(pod) == 0);  // stopped (its pid file removed)
    std::map<std::string, int> wanted;
    std::vector<std::uint64_t> rest;
    for (std::uint16_t n = 1; n <= cluster.size(); ++n) {
      if (n == pod) continue;
      wanted[fmt::format("kv-pod-{}", n)] = static_cast<int>(kShards);
      rest.push_back(n);
    }
    REQUIRE(eventually([&] { return cluster.replica_counts() == wanted; }, 30s));
    REQUIRE(eventually(
        [&] {
          for (std::uint64_t shard = 0; shard < kShards; ++shard) {
            for (std::uint64_t n : rest) {
              if (probe.voters(static_cast<std::uint16_t>(n), shard) != rest) return false;
            }
          }
          return true;
        },
        30s));
  }
};

void run_scenario(const char* name, std::uint64_t seed, std::size_t default_rounds, const Setup& setup,
                  const std::function<void(Fault&)>& faults) {
  const auto started = std::chrono::steady_clock::now();
  KvLocalCluster cluster({.pods = setup.pods,
                          .shards = kShards,
                          .replication_factor = setup.replication_factor,
                          .spare_pods = setup.spare_pods});
  INFO(cluster.started().out << cluster.started().err);
  REQUIRE(cluster.started().code == 0);
  if (setup.replication_factor != 0) {
    // Every pod is in the manager's map before the shards are created: they start on all three.
    REQUIRE(eventually([&] { return cluster.replica_counts().size() == cluster.size(); }, 20s));
    // Every shard's Raft group exists (they are created on first use), so each move is one.
    auto client = elfin::test::kv_client(cluster.pods(), 60052);
    if (!client) FAIL(client.error());
    for (int i = 0; i < 64; ++i) REQUIRE(client->put(fmt::format("k{}", i), "v"));
  }
  std::vector<std::uint64_t> shards;
  const auto keys = hot_keys(shards, setup);
  KvWorkload load({.pods = cluster.pods(),
                   .clients = static_cast<std::size_t>(env_number("ELFIN_KV_FAULTS_CLIENTS", 4)),
                   .keys = keys,
                   .seed = seed});
  PartitionStatusProbe probe(cluster.pods(), 60050);
  load.start();
  INFO("the clients got no answers before the fault");
  REQUIRE(load.progress(60, 30s));  // the shards exist and serve
  Fault fault{cluster, load, probe, shards,
              static_cast<std::size_t>(env_number("ELFIN_KV_FAULTS_ROUNDS", default_rounds))};
  faults(fault);
  fault.progress(40);  // and after it
  load.stop();
  load.final_reads(30s);
  const auto ran = std::chrono::steady_clock::now();
  const auto history = load.history();
  const auto result = lin::check(lin::KvModel{}, history, {.timeout = 60s, .threads = 2});
  const auto stats = load.stats();
  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  if (std::getenv("ELFIN_KV_FAULTS_STATS") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    std::printf(
        "%s: %zu rounds, %.1f s run + %.2f s check: %zu operations checked (%zu pending), %zu acknowledged writes, "
        "%zu Timeout, %zu Unavailable, %zu VersionMismatch, %zu reads failed; %s\n",
        name, fault.rounds, seconds(ran - started), seconds(std::chrono::steady_clock::now() - ran), result.operations,
        result.pending, stats.acknowledged_writes, stats.unknown, stats.unavailable, stats.mismatches,
        stats.failed_reads, lin::to_string(result.verdict));
  }
  INFO(result.summary());
  std::string operations;  // every operation on a violating key, for the report
  for (const auto& violation : result.violations) {
    for (const auto& op : history.operations) {
      if (op.input.key != violation.key) continue;
      operations += fmt::format("  client {} [{}, {}] {} {}\n", op.client, op.invoke,
                                op.complete ? std::to_string(*op.complete) : "-", op.input.key,
                                lin::KvModel{}.describe(op.input, op.output));
    }
  }
  INFO(operations);
  CHECK(result.verdict == lin::Verdict::Ok);
  for (const auto& problem : stats.problems) FAIL_CHECK(problem);
  CHECK(stats.acknowledged_writes > 50);
}

}  // namespace

TEST_CASE("kv faults: a pod killed with SIGKILL and restarted loses no acknowledged write and stays linearizable",
          "[integration][kv]") {
  run_scenario("kill -9 and restart", 1, 1, {}, [](Fault& f) {
    for (std::size_t round = 0; round < f.rounds; ++round) {
      const auto pod = static_cast<std::uint16_t>(1 + round % f.cluster.size());  // pod 1: every client's first
      REQUIRE(f.cluster.signal(pod, SIGKILL));
      f.progress(40);  // two of three pods serve
      f.restart(pod);
      f.progress(20);
    }
  });
}

TEST_CASE("kv faults: the leader of the hot shards killed again and again keeps every answer linearizable",
          "[integration][kv]") {
  run_scenario("kill the hot shards' leader", 2, 2, {}, [](Fault& f) {
    for (std::size_t round = 0; round < f.rounds; ++round) {
      const std::uint16_t leader = f.leader(round);
      REQUIRE(f.cluster.signal(leader, SIGKILL));
      f.progress(40);  // a new leader serves
      f.restart(leader);
      f.progress(20);
    }
  });
}

TEST_CASE("kv faults: a rolling restart of every pod keeps every answer linearizable", "[integration][kv]") {
  run_scenario("rolling restart", 3, 1, {}, [](Fault& f) {
    for (std::size_t round = 0; round < f.rounds; ++round) {
      for (std::uint16_t pod = 1; pod <= f.cluster.size(); ++pod) {
        REQUIRE(f.cluster.stop_pod(pod, 20s));
        f.restart(pod);
        f.progress(20);
      }
    }
  });
}

TEST_CASE("kv faults: a leader paused with SIGSTOP and resumed keeps every answer linearizable", "[integration][kv]") {
  run_scenario("pause the leader", 4, 1, {}, [](Fault& f) {
    for (std::size_t round = 0; round < f.rounds; ++round) {
      const std::uint16_t leader = f.leader(round);
      REQUIRE(f.cluster.signal(leader, SIGSTOP));
      f.progress(40);  // the other two elect a leader and serve, the paused one still holding its connections
      REQUIRE(f.cluster.signal(leader, SIGCONT));
      REQUIRE(f.cluster.serves(leader, 30s));
      f.progress(20);
    }
  });
}

TEST_CASE(
    "kv faults: the shard manager killed mid-run: the pods serve without it and, restarted, it places replicas again",
    "[integration][kv]") {
  run_scenario("kill the manager", 5, 1,
               {.replication_factor = 3, .spare_pods = 1, .key_shards = 8, .keys_per_shard = 2}, [](Fault& f) {
                 REQUIRE(f.cluster.signal_manager(SIGKILL));
                 f.progress(40);  // the pods serve by the assignment they hold
                 // A pod killed and restarted while the manager is down: its replicas stay where
                 // they are (nobody re-replicates them); the other two serve every shard.
                 REQUIRE(f.cluster.signal(3, SIGKILL));
                 f.progress(40);
                 // `elfin kv cluster start` brings back the manager (from its state file) and pod 3.
                 f.restart(3);
                 f.progress(20);
                 // Placement resumed: a pod added now gets its share (16 shards x 3 over 4 pods).
                 f.add_pod(12);
                 f.progress(20);
               });
}

TEST_CASE("kv faults: a pod added mid-run takes its share of replicas by membership changes, linearizably",
          "[integration][kv]") {
  run_scenario("add a pod", 6, 1, {.replication_factor = 3, .spare_pods = 1, .key_shards = 8, .keys_per_shard = 2},
               [](Fault& f) {
                 f.add_pod(12);  // 12 of the 16 shards each move one replica, the clients running
                 f.progress(40);
               });
}

TEST_CASE("kv faults: a pod removed gracefully mid-run hands its replicas over first, linearizably",
          "[integration][kv]") {
  run_scenario("remove a pod", 7, 1, {.pods = 4, .replication_factor = 3, .key_shards = 8, .keys_per_shard = 2},
               [](Fault& f) {
                 f.remove_pod(4);  // its 12 replicas move to pods 1-3, the clients running
                 f.progress(40);
               });
}
