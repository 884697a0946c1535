// The KV service under process faults, checked for linearizability: a three-pod cluster
// (`elfin kv cluster start`, real processes on loopback) serves concurrent clients doing a random
// mix of put, get, cas, delete and delete_if_version over a few keys in two shards
// (support/kv_workload.hpp records every operation), while one fault scenario runs; then every key
// is read once more, and the history is checked per key: zero violations, no acknowledged write
// lost. The scenarios: a pod killed with SIGKILL and restarted; the leader of the hot shards killed
// again and again; a rolling restart of every pod; the leader paused (SIGSTOP) and resumed.
//
// Longer runs: ELFIN_KV_FAULTS_ROUNDS=<n> repeats each scenario's fault n times (default 1; the
// leader kills 2), ELFIN_KV_FAULTS_CLIENTS=<n> sets the clients (default 4),
// ELFIN_KV_FAULTS_STATS=1 prints what each scenario did and how long it took.
#include <catch2/catch.hpp>

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
#include <elfin/linearizability/checker.hpp>

#include "kv_local_cluster.hpp"
#include "kv_workload.hpp"

using namespace std::chrono_literals;
namespace lin = elfin::linearizability;
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

/// Six keys, three in each of two shards: the hot shards.
std::vector<std::string> hot_keys(std::vector<std::uint64_t>& shards) {
  std::vector<std::string> keys;
  std::map<std::uint64_t, int> per_shard;
  for (int i = 0; keys.size() < 6; ++i) {
    std::string key = fmt::format("f:{}", i);
    const auto shard = elfin::actors::kv::shard_of(key, kShards);
    if (per_shard.size() == 2 && !per_shard.contains(shard)) continue;
    if (per_shard[shard] == 3) continue;
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
};

void run_scenario(const char* name, std::uint64_t seed, std::size_t default_rounds,
                  const std::function<void(Fault&)>& faults) {
  const auto started = std::chrono::steady_clock::now();
  KvLocalCluster cluster({.shards = kShards});
  INFO(cluster.started().out << cluster.started().err);
  REQUIRE(cluster.started().code == 0);
  std::vector<std::uint64_t> shards;
  const auto keys = hot_keys(shards);
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
  run_scenario("kill -9 and restart", 1, 1, [](Fault& f) {
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
  run_scenario("kill the hot shards' leader", 2, 2, [](Fault& f) {
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
  run_scenario("rolling restart", 3, 1, [](Fault& f) {
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
  run_scenario("pause the leader", 4, 1, [](Fault& f) {
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
