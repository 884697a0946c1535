// Idle partitions sleep (quiesce_after_ticks): many partitions of three nodes in the simulated
// cluster (virtual time, tick 10 ms, election timeout 10 ticks = 100 ms) quiesce, and then take
// no tick and send nothing but the per-node liveness pings; a write to a quiesced partition
// commits as fast as to an awake one; killing the node that leads quiesced partitions gets each
// a new leader within a stated bound; a cut-off follower catches up once healed. Awake partitions'
// heartbeats travel together per node pair (coalesce_heartbeats): one message per link per tick.
// ELFIN_PARTITION_SIM_STATS=1 prints the election times after the kill.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/partition.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/kv/command.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/testing/sim_cluster.hpp>

#include "../temp_dir.hpp"
#include "partition_node.hpp"

namespace {

namespace ap = elfin::actors::partition;
namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using namespace std::chrono_literals;
using Nanos = std::chrono::nanoseconds;
using elfin::testing::SimCluster;
using elfin::testing::SimNode;

constexpr std::uint16_t kNodes = 3;
// Sanitized builds run smaller clusters, shorter idle spells and fewer seeds (each step is slower).
#ifdef ELFIN_PARTITION_SIM_SANITIZED
constexpr std::uint64_t kPartitions = 24;
constexpr Nanos kIdle = 10s;
const std::vector<std::uint64_t> kKillSeeds = {21};
#else
constexpr std::uint64_t kPartitions = 64;
constexpr Nanos kIdle = 30s;
const std::vector<std::uint64_t> kKillSeeds = {21, 22, 23};
#endif
constexpr Nanos kTick = 10ms;
constexpr int kElectionTicks = 10;
constexpr int kQuiesceAfter = 5;

elfin::testing::SimClusterOptions options(const elfin::test::TempDir& root, std::uint64_t seed, int quiesce_after,
                                          Nanos max_delay, bool coalesce) {
  elfin::testing::SimClusterOptions o;
  o.nodes = kNodes;
  o.seed = seed;
  o.faults.max_delay = max_delay;
  o.disk_root = root.path();
  o.config = [quiesce_after, coalesce](const SimNode& node) {
    return fmt::format(R"(
[wal]
dir = "{0}"
wal_count = 2
preallocate = false

[partitions]
nodes = [1, 2, 3]
tick = "10ms"
election_ticks = {1}
heartbeat_ticks = 1
quiesce_after_ticks = {2}
coalesce_heartbeats = {3}
snapshot_dir = "{0}-snapshots"
proposal_timeout = "1s"
)",
                       node.disk().dir(), kElectionTicks, quiesce_after, coalesce);
  };
  return o;
}

elfin::Topology topology(SimNode& node) {
  elfin::Topology t;
  psim::mount_partition_node(t, node, kNodes, {});
  return t;
}

/// A small test cluster: statuses, leaders, writes.
class Cluster {
 public:
  /// `max_delay`: links delay each message 1 ms up to this (drawn from the seed).
  explicit Cluster(std::uint64_t seed, int quiesce_after = kQuiesceAfter, Nanos max_delay = 1ms, bool coalesce = true)
      : sim_(options(root_, seed, quiesce_after, max_delay, coalesce), topology) {}

  SimCluster& sim() { return sim_; }

  std::optional<pr::PartitionStatus> status(std::uint16_t node, std::uint64_t partition) {
    if (!sim_.is_up(node)) return std::nullopt;
    auto request = sim_.request(node, "partitions", pr::GetPartitionStatus{partition});
    if (!sim_.run_until([&] { return request.done(); }, 100ms)) return std::nullopt;
    auto answer = request.result();
    if (!answer) return std::nullopt;
    return *answer;
  }

  /// The node leading `partition` among the live ones (0: none).
  std::uint16_t leader(std::uint64_t partition) {
    for (std::uint16_t n = 1; n <= kNodes; ++n) {
      auto s = status(n, partition);
      if (s && s->role == pr::Role::Leader) return n;
    }
    return 0;
  }

  /// Creates every partition (a status request creates its actor; its first campaign its peers')
  /// and waits until each has a leader.
  bool elect_all() {
    for (std::uint64_t p = 0; p < kPartitions; ++p) std::ignore = status(1, p);
    return sim_.run_until(
        [&] {
          for (std::uint64_t p = 0; p < kPartitions; ++p) {
            if (leader(p) == 0) return false;
          }
          return true;
        },
        10s);
  }

  /// Every live replica of every partition is quiesced.
  bool all_quiesced() {
    for (std::uint16_t n = 1; n <= kNodes; ++n) {
      if (!sim_.is_up(n)) continue;
      for (std::uint64_t p = 0; p < kPartitions; ++p) {
        auto s = status(n, p);
        if (!s || !s->quiesced) return false;
      }
    }
    return true;
  }

  /// Ticks taken by every live replica, in all.
  std::uint64_t ticks() {
    std::uint64_t total = 0;
    for (std::uint16_t n = 1; n <= kNodes; ++n) {
      for (std::uint64_t p = 0; p < kPartitions; ++p) {
        if (auto s = status(n, p)) total += s->ticks;
      }
    }
    return total;
  }

  /// Proposes a put to the partition's leader on `node`; the virtual time until it is answered.
  std::optional<Nanos> put(std::uint16_t node, std::uint64_t partition, const std::string& key) {
    const Nanos start = sim_.now();
    auto request = sim_.request(node, "partitions",
                                pr::Propose{partition, pk::encode(pk::KvCommand{pk::KvOp::Put, key, "value", 0})});
    if (!sim_.run_until([&] { return request.done(); }, 2s)) return std::nullopt;
    auto answer = request.result();
    if (!answer || !*answer) return std::nullopt;
    return sim_.now() - start;
  }

 private:
  elfin::test::TempDir root_{"elfin-quiescence-sim", elfin::test::TempDir::Base::memory};
  SimCluster sim_;
};

/// The liveness pings of `duration` at most: each of the 6 directed node links, one per tick.
std::uint64_t max_pings(Nanos duration) {
  return static_cast<std::uint64_t>(kNodes * (kNodes - 1)) * static_cast<std::uint64_t>(duration / kTick + 2);
}

}  // namespace

TEST_CASE("an idle cluster of many partitions quiesces, then takes no tick and sends only the per-node pings",
          "[partition_sim]") {
  Cluster cluster(11);
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  // Idle: quiesce_after_ticks (50 ms) and a handshake round later, every replica sleeps.
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  const std::uint64_t ticks = cluster.ticks();
  const std::uint64_t sent = cluster.sim().network().stats().sent;
  cluster.sim().advance(kIdle);
  const std::uint64_t idle_sent = cluster.sim().network().stats().sent - sent;
  INFO("messages over the network in " << kIdle.count() / 1'000'000'000 << " s idle: " << idle_sent);
  CHECK(cluster.ticks() == ticks);
  CHECK(idle_sent <= max_pings(kIdle));
  CHECK(idle_sent > 0);  // the pings do go out
  // Awake, the same partitions would have sent a heartbeat and a response per follower per tick.
  CHECK(idle_sent * 10 < kPartitions * 4 * static_cast<std::uint64_t>(kIdle / kTick));
  CHECK(cluster.all_quiesced());
}

TEST_CASE(
    "without quiescence or coalescing the same idle cluster ticks and sends a heartbeat per partition all the time",
    "[partition_sim]") {
  Cluster cluster(11, 0, 1ms, false);
  REQUIRE(cluster.elect_all());
  cluster.sim().advance(500ms);
  const std::uint64_t ticks = cluster.ticks();
  const std::uint64_t sent = cluster.sim().network().stats().sent;
  cluster.sim().advance(2s);  // 200 ticks
  CHECK(cluster.ticks() - ticks >= kNodes * kPartitions * 190);
  CHECK(cluster.sim().network().stats().sent - sent >= kPartitions * 4 * 190);
  CHECK_FALSE(cluster.all_quiesced());
}

TEST_CASE(
    "awake partitions' heartbeats are coalesced: one message per node pair and tick each way, and every "
    "partition keeps its leader",
    "[partition_sim]") {
  Cluster cluster(13, 0);  // no quiescence: every partition stays awake and heartbeats every tick
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  cluster.sim().advance(500ms);
  std::vector<std::pair<std::uint16_t, std::uint64_t>> before;  // leader and term per partition
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    const std::uint16_t leader = cluster.leader(p);
    REQUIRE(leader != 0);
    before.emplace_back(leader, cluster.status(leader, p)->term);
  }
  const std::uint64_t ticks = cluster.ticks();
  const std::uint64_t sent = cluster.sim().network().stats().sent;
  cluster.sim().advance(2s);  // 200 ticks, 20 election timeouts
  const std::uint64_t awake_sent = cluster.sim().network().stats().sent - sent;
  INFO("messages over the network in 2 s with " << kPartitions << " awake partitions: " << awake_sent);
  CHECK(cluster.ticks() - ticks >= kNodes * kPartitions * 190);
  // Uncoalesced, the leaders would send a heartbeat per follower per tick, and get its answer.
  CHECK(awake_sent <= max_pings(2s));
  CHECK(awake_sent * 10 < kPartitions * 4 * 190);
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    auto s = cluster.status(before[p].first, p);
    REQUIRE(s);
    CHECK(s->role == pr::Role::Leader);
    CHECK(s->term == before[p].second);
  }
}

TEST_CASE("a write to a quiesced partition commits as fast as to an awake one, and the partition sleeps again",
          "[partition_sim]") {
  Cluster cluster(12);
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  const std::uint16_t leader = cluster.leader(0);
  REQUIRE(leader != 0);
  const auto asleep = cluster.put(leader, 0, "k1");
  REQUIRE(asleep);
  const auto awake = cluster.put(leader, 0, "k2");  // right after: the partition is awake now
  REQUIRE(awake);
  INFO("commit latency (virtual): quiesced " << asleep->count() << " ns, awake " << awake->count() << " ns");
  CHECK(*asleep <= *awake + 1ms);
  CHECK(*asleep < kTick);  // no tick waited for
  for (std::uint16_t n = 1; n <= kNodes; ++n) {
    auto s = cluster.status(n, 0);
    REQUIRE(s);
    CHECK_FALSE(s->quiesced);
  }
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  for (std::uint16_t n = 1; n <= kNodes; ++n) {
    auto s = cluster.status(n, 0);
    REQUIRE(s);
    CHECK(s->applied == cluster.status(leader, 0)->last_index);
  }
}

TEST_CASE("killing the node that leads quiesced partitions: each gets a new leader within 6 election timeouts",
          "[partition_sim]") {
  // The bound, in ticks (e = election_ticks): the liveness actor declares the node down after e
  // ticks without its pings, checked every tick (e + 1); the followers then campaign after 1 to e
  // ticks, randomized; when both campaign at once (a split vote, as in any Raft election) they
  // try again after e to 2e ticks. So 2e + 1 ticks plus round trips without a split, 4e + 1 with
  // one; the check allows two splits in a row (6e + 1, rounded to 6 election timeouts plus one
  // tick). An awake group takes e to 2e ticks plus the same splits.
  constexpr Nanos kBound = 6 * kElectionTicks * kTick + kTick;
  for (std::uint64_t seed : kKillSeeds) {
    Cluster cluster(seed, kQuiesceAfter, 3ms);
    INFO(cluster.sim().describe());
    REQUIRE(cluster.elect_all());
    REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
    std::map<std::uint16_t, std::vector<std::uint64_t>> led;
    for (std::uint64_t p = 0; p < kPartitions; ++p) led[cluster.leader(p)].push_back(p);
    std::uint16_t victim = 1;
    for (const auto& [node, partitions] : led) {
      if (partitions.size() > led[victim].size()) victim = node;
    }
    REQUIRE(!led[victim].empty());
    cluster.sim().advance(5s);  // long asleep first: nothing must have timed out meanwhile
    const Nanos killed = cluster.sim().now();
    cluster.sim().crash(victim);
    std::vector<std::uint64_t> waiting = led[victim];
    std::vector<Nanos> took;
    while (!waiting.empty() && cluster.sim().now() - killed < 2s) {
      cluster.sim().advance(kTick);
      std::erase_if(waiting, [&](std::uint64_t p) {
        if (cluster.leader(p) == 0) return false;
        took.push_back(cluster.sim().now() - killed);
        return true;
      });
    }
    CHECK(waiting.empty());
    REQUIRE(!took.empty());
    std::sort(took.begin(), took.end());
    const auto ms = [](Nanos t) { return std::chrono::duration_cast<std::chrono::milliseconds>(t).count(); };
    INFO("partitions led by node " << victim << ": " << led[victim].size() << "; new leaders after (ms) min "
                                   << ms(took.front()) << ", median " << ms(took[took.size() / 2]) << ", max "
                                   << ms(took.back()) << " (resolution: one tick, 10 ms)");
    CHECK(took.back() <= kBound);
    if (std::getenv("ELFIN_PARTITION_SIM_STATS") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
      std::printf(
          "partition sim: seed %llu: %zu partitions led by the killed node; new leaders after %lld / %lld / %lld ms "
          "(min / median / max)\n",
          static_cast<unsigned long long>(seed), led[victim].size(), static_cast<long long>(ms(took.front())),
          static_cast<long long>(ms(took[took.size() / 2])), static_cast<long long>(ms(took.back())));
    }
    // And they serve writes.
    for (std::uint64_t p : led[victim]) {
      const std::uint16_t leader = cluster.leader(p);
      REQUIRE(leader != 0);
      CHECK(cluster.put(leader, p, "after"));
    }
  }
}

TEST_CASE("a cut-off follower is not left behind: healed, it catches up and the partitions sleep again",
          "[partition_sim]") {
  Cluster cluster(31);
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  cluster.sim().network().isolate(3);
  cluster.sim().advance(1s);  // partitions led by node 3 elect elsewhere meanwhile
  std::vector<std::uint64_t> written;
  for (std::uint64_t p = 0; p < kPartitions; p += 4) {
    std::uint16_t leader = 0;
    REQUIRE(cluster.sim().run_until(
        [&] {
          leader = cluster.leader(p);
          return leader == 1 || leader == 2;
        },
        2s));
    REQUIRE(cluster.put(leader, p, fmt::format("cut-{}", p)));
    written.push_back(p);
  }
  cluster.sim().advance(2s);
  for (std::uint64_t p : written) {
    auto s = cluster.status(3, p);
    REQUIRE(s);
    CHECK(s->applied < cluster.status(cluster.leader(p), p)->commit);  // it could not have the write
  }
  cluster.sim().network().heal_all();
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 5s));
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    const std::uint16_t leader = cluster.leader(p);
    REQUIRE(leader != 0);
    const auto lead = cluster.status(leader, p);
    const auto lagged = cluster.status(3, p);
    REQUIRE(lead);
    REQUIRE(lagged);
    CHECK(lagged->applied == lead->commit);
    CHECK(lagged->leader == leader);
  }
}

TEST_CASE("a node that leads quiesced partitions and restarts at once: its pings' new stamp wakes the followers",
          "[partition_sim]") {
  Cluster cluster(41);
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  std::vector<std::uint64_t> led;
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    if (cluster.leader(p) == 1) led.push_back(p);
  }
  REQUIRE(!led.empty());
  // Back before its silence could reach the liveness timeout: the partitions it led lost their
  // leader all the same (a restarted replica starts as a follower).
  cluster.sim().crash(1);
  cluster.sim().restart(1);
  const Nanos restarted = cluster.sim().now();
  REQUIRE(cluster.sim().run_until(
      [&] {
        for (std::uint64_t p : led) {
          if (cluster.leader(p) == 0) return false;
        }
        return true;
      },
      2s));
  INFO("new leaders after "
       << std::chrono::duration_cast<std::chrono::milliseconds>(cluster.sim().now() - restarted).count() << " ms");
  CHECK(cluster.sim().now() - restarted <= 6 * kElectionTicks * kTick);
  for (std::uint64_t p : led) CHECK(cluster.put(cluster.leader(p), p, "after restart"));
}

TEST_CASE(
    "a dead follower's node keeps nothing awake: the partitions sleep without it and catch it up when it "
    "restarts",
    "[partition_sim]") {
  Cluster cluster(51);
  INFO(cluster.sim().describe());
  REQUIRE(cluster.elect_all());
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 2s));
  cluster.sim().crash(3);
  // Every partition writes once without node 3 (those it led elect a new leader first).
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    std::uint16_t leader = 0;
    REQUIRE(cluster.sim().run_until(
        [&] {
          leader = cluster.leader(p);
          return leader != 0;
        },
        3s));
    REQUIRE(cluster.put(leader, p, fmt::format("without-3-{}", p)));
  }
  // The liveness timeout (one election timeout) declares node 3 down; the leaders then sleep
  // with the one follower left, which is a quorum with them.
  REQUIRE(cluster.sim().run_until([&] { return cluster.all_quiesced(); }, 3s));
  const std::uint64_t ticks = cluster.ticks();
  cluster.sim().advance(kIdle);
  CHECK(cluster.ticks() == ticks);
  cluster.sim().restart(3);
  // Its pings say it is back: the leaders wake, catch it up, and everyone sleeps again.
  REQUIRE(cluster.sim().run_until(
      [&] {
        if (!cluster.all_quiesced()) return false;
        for (std::uint64_t p = 0; p < kPartitions; ++p) {
          const std::uint16_t leader = cluster.leader(p);
          const auto lead = leader == 0 ? std::nullopt : cluster.status(leader, p);
          const auto returned = cluster.status(3, p);
          if (!lead || !returned || returned->applied != lead->commit) return false;
        }
        return true;
      },
      5s));
}
