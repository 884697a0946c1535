// elfin::kv::Client sends each shard's requests to the pod whose replica leads the shard, as the
// fronts' answers name it: once a shard answered, its puts are not forwarded between fronts (the
// pods' elfin_kv_forwarded_total stays where it was), also for a new client, which starts from the
// fronts' leader tables; after the leader's pod is killed the client finds the new leader within
// one retry; a client that still names an old leader's pod costs at most one forward, then goes
// straight to the new one. Real `elfin run` pods on loopback, free ports.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>

#include "kv_local_cluster.hpp"
#include "prometheus_process.hpp"

using namespace std::chrono_literals;

namespace {

class LocalCluster : public elfin::test::KvLocalCluster {
 public:
  LocalCluster() : KvLocalCluster({.pods = 3, .shards = 16}) {
    INFO(started().out << started().err);
    REQUIRE(started().code == 0);
  }

  /// Pod `pod`'s telemeter port, from DIR/metrics ("pod-N 127.0.0.1:PORT" lines).
  [[nodiscard]] unsigned short metrics_port(int pod) const {
    std::ifstream in(dir() + "/metrics");
    for (std::string name, address; in >> name >> address;) {
      if (name == fmt::format("pod-{}", pod)) {
        return static_cast<unsigned short>(std::stoul(address.substr(address.rfind(':') + 1)));
      }
    }
    FAIL("DIR/metrics names no pod-" << pod);
    return 0;
  }

  /// The requests the fronts of `pods` sent on to another pod's front, summed (each pod's
  /// elfin_kv_forwarded_total; a pod that never forwarded has no such series yet).
  [[nodiscard]] double forwarded(const std::vector<int>& pods) const {
    double total = 0;
    for (const int pod : pods) {
      const auto body = elfin::integration::http_get(metrics_port(pod), "/metrics");
      if (!body) FAIL("pod " << pod << " served no /metrics");
      std::istringstream lines(*body);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("elfin_kv_forwarded_total{", 0) == 0) total += std::stod(line.substr(line.rfind(' ') + 1));
      }
    }
    return total;
  }
};

/// A client of every pod (pod 1 first) that knows only `pod`.
elfin::Result<elfin::kv::Client, std::string> client_of(const LocalCluster& cluster, std::uint16_t pod,
                                                        std::uint16_t node) {
  elfin::kv::ClientOptions options;
  options.pods = {cluster.pods().at(pod - 1U)};
  options.pod_nodes = {pod};
  options.node = node;
  options.timeout = 20s;
  return elfin::kv::Client::connect(options);
}

}  // namespace

TEST_CASE("kv leader: once a shard answered, a client's puts go to the leader's pod and no front forwards them",
          "[integration][kv]") {
  LocalCluster cluster;
  auto client = elfin::test::kv_client(cluster.pods(), 60200);
  if (!client) FAIL(client.error());

  std::vector<std::string> keys;
  std::map<std::string, std::uint16_t> leader;
  for (int i = 0; i < 12; ++i) {
    keys.push_back(fmt::format("leader:{}", i));
    const auto put = client->put(keys.back(), "warm");
    if (!put) FAIL(elfin::protocols::kv::to_string(put.error()));
    CHECK(put->leader >= 1);
    CHECK(put->leader <= 3);
    CHECK(put->shards == 16);
    leader[keys.back()] = put->leader;
  }
  // Sent to the first pod, as a client that does not route does, the puts of the shards other
  // pods lead would be forwarded.
  REQUIRE(std::any_of(leader.begin(), leader.end(), [](const auto& entry) { return entry.second != 1; }));

  const double before = cluster.forwarded({1, 2, 3});
  for (int round = 0; round < 3; ++round) {
    for (const auto& key : keys) {
      const auto put = client->put(key, fmt::format("round {}", round));
      if (!put) FAIL(elfin::protocols::kv::to_string(put.error()));
      CHECK(put->leader == leader[key]);
      const auto got = client->get(key);
      REQUIRE(got);
      CHECK(got->value == fmt::format("round {}", round));
    }
  }
  CHECK(cluster.forwarded({1, 2, 3}) - before == 0);

  // A new client starts from the fronts' leader tables: none of its puts is forwarded either.
  auto fresh = elfin::test::kv_client(cluster.pods(), 60201);
  if (!fresh) FAIL(fresh.error());
  const double before_fresh = cluster.forwarded({1, 2, 3});
  for (const auto& key : keys) {
    const auto put = fresh->put(key, "fresh");
    REQUIRE(put);
    CHECK(put->leader == leader[key]);
  }
  CHECK(cluster.forwarded({1, 2, 3}) - before_fresh == 0);
}

TEST_CASE(
    "kv leader: after the leader's pod is killed the client follows the new leader within one retry, and a client "
    "naming a restarted old leader costs at most one forward",
    "[integration][kv]") {
  LocalCluster cluster;
  auto follower = elfin::test::kv_client(cluster.pods(), 60210);
  if (!follower) FAIL(follower.error());
  auto stale = elfin::test::kv_client(cluster.pods(), 60211);
  if (!stale) FAIL(stale.error());
  const std::string key = "moving";
  const auto first = follower->put(key, "1");
  if (!first) FAIL(elfin::protocols::kv::to_string(first.error()));
  const std::uint16_t old_leader = first->leader;
  REQUIRE(old_leader >= 1);
  const auto seen = stale->put(key, "2");
  REQUIRE(seen);
  REQUIRE(seen->leader == old_leader);  // both clients send the shard's requests to its pod now

  REQUIRE(cluster.signal(old_leader, SIGKILL));
  // The first attempt goes to the dead pod and fails; the retry goes to another pod, whose front
  // finds the new leader (within the call's deadline, elections included).
  const auto moved = follower->put(key, "3");
  if (!moved) FAIL(elfin::protocols::kv::to_string(moved.error()));
  const std::uint16_t new_leader = moved->leader;
  CHECK(new_leader != old_leader);
  CHECK(new_leader >= 1);
  std::vector<int> alive;
  for (int pod = 1; pod <= 3; ++pod) {
    if (pod != old_leader) alive.push_back(pod);
  }
  const double before_follow = cluster.forwarded(alive);
  const auto followed = follower->put(key, "4");
  REQUIRE(followed);
  CHECK(followed->leader == new_leader);
  CHECK(cluster.forwarded(alive) - before_follow == 0);

  // The old leader's pod comes back as a follower; its front learns the new leader from a put of
  // its own client.
  REQUIRE(cluster.start_again().code == 0);
  REQUIRE(cluster.serves(old_leader, 30s));
  auto local = client_of(cluster, old_leader, 60212);
  if (!local) FAIL(local.error());
  const auto through_old = local->put(key, "5");
  if (!through_old) FAIL(elfin::protocols::kv::to_string(through_old.error()));
  REQUIRE(through_old->leader == new_leader);

  // `stale` still names the old leader's pod: its front forwards the put once (or, while the
  // client has not yet redialled that pod, the first pod's front does, unless it leads), and the
  // answer names the new leader, to which the next put goes straight.
  double before = cluster.forwarded({1, 2, 3});
  const auto once = stale->put(key, "6");
  REQUIRE(once);
  CHECK(once->leader == new_leader);
  CHECK(cluster.forwarded({1, 2, 3}) - before <= 1);
  before = cluster.forwarded({1, 2, 3});
  const auto straight = stale->put(key, "7");
  REQUIRE(straight);
  CHECK(straight->leader == new_leader);
  CHECK(cluster.forwarded({1, 2, 3}) - before == 0);
  const auto got = follower->get(key);
  REQUIRE(got);
  CHECK(got->value == "7");
}
