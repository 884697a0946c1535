// The KV service with a shard manager (`elfin kv cluster start --replication-factor 3`): real
// `elfin run` processes on loopback (a manager node and the pods), free ports. Each shard lives on
// three pods only; a fourth pod added gets its share of the replicas (the leaders move them by
// Raft membership changes) while a writer runs, losing no acknowledged write; a pod killed with
// SIGKILL has its replicas re-created on the others once the manager's health check drops it.
// Where replicas are is read from the manager (`elfin shard --assignments`) and from the
// partitions themselves (raft.GetPartitionStatus through a light node: each replica's membership).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/network/light_node.hpp>
#include <elfin/protocols/raft.hpp>

#include "../unit/eventually.hpp"
#include "kv_local_cluster.hpp"

using namespace std::chrono_literals;
using elfin::test::eventually;

namespace {

/// Few shards: every one is touched by the writes below, so each exists as a Raft group.
constexpr std::uint32_t kShards = 16;

class PlacedCluster : public elfin::test::KvLocalCluster {
 public:
  explicit PlacedCluster(std::uint16_t pods, std::uint16_t spare = 0)
      : KvLocalCluster({.pods = pods, .shards = kShards, .replication_factor = 3, .spare_pods = spare}) {
    INFO(started().out << started().err);
    REQUIRE(started().code == 0);
  }
};

/// Asks the pods' partition groups for their replicas' status (a light node of its own).
class Statuses {
 public:
  Statuses(const std::vector<std::string>& pods, std::uint16_t node) {
    elfin::network::LightNodeOptions options;
    options.peers = pods;
    options.node = node;
    for (std::uint16_t n = 1; n <= pods.size(); ++n) {
      options.groups.push_back({.name = fmt::format("partitions-{}", n), .nodes = {n}, .remote_name = "partitions"});
    }
    auto started = elfin::network::LightNode::start(std::move(options));
    if (!started) FAIL(started.error());
    node_ = std::make_unique<elfin::network::LightNode>(std::move(*started));
  }

  /// The voters pod `pod`'s replica of `partition` has, sorted (empty: none, or no answer).
  std::vector<std::uint64_t> voters(std::uint16_t pod, std::uint32_t partition) {
    auto answer =
        node_->request(fmt::format("partitions-{}", pod), elfin::protocols::raft::GetPartitionStatus{partition}, 3s)
            .get();
    if (!answer) return {};
    auto voters = answer->conf.voters;
    std::sort(voters.begin(), voters.end());
    return voters;
  }

  /// Every partition's replicas on each of `pods` have exactly `pods` as voters.
  bool all_on(const std::vector<std::uint64_t>& pods) {
    for (std::uint32_t partition = 0; partition < kShards; ++partition) {
      for (std::uint64_t pod : pods) {
        if (voters(static_cast<std::uint16_t>(pod), partition) != pods) return false;
      }
    }
    return true;
  }

  /// The partitions pod `pod` is a voter of, in a membership of three.
  std::size_t voter_of(std::uint16_t pod) {
    std::size_t count = 0;
    for (std::uint32_t partition = 0; partition < kShards; ++partition) {
      const auto v = voters(pod, partition);
      count += v.size() == 3 && std::find(v.begin(), v.end(), pod) != v.end();
    }
    return count;
  }

 private:
  std::unique_ptr<elfin::network::LightNode> node_;
};

/// Writes keys k0..k(count-1) (every shard gets some), each acknowledged.
void write_keys(elfin::kv::Client& client, int count) {
  for (int i = 0; i < count; ++i) {
    INFO(i);
    REQUIRE(client.put(fmt::format("k{}", i), fmt::format("v{}", i)));
  }
}

/// A writer thread: puts w<i> = <i> until stopped, remembering the acknowledged ones.
class Writer {
 public:
  /// Takes a client connected on the test's thread (a failure there fails the test) and writes
  /// on its own.
  explicit Writer(elfin::kv::Client client)
      : client_(std::move(client)), thread_([this] {
          for (int i = 0; !stop_; ++i) {
            const std::string key = fmt::format("w{}", i);
            if (client_.put(key, std::to_string(i))) {
              std::lock_guard lock(mutex_);
              acknowledged_.push_back(key);
            } else {
              ++failed_;
            }
          }
        }) {}
  ~Writer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] std::size_t acknowledged() {
    std::lock_guard lock(mutex_);
    return acknowledged_.size();
  }
  [[nodiscard]] std::vector<std::string> keys() {
    std::lock_guard lock(mutex_);
    return acknowledged_;
  }
  [[nodiscard]] int failed() const { return failed_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> failed_{0};
  std::mutex mutex_;
  std::vector<std::string> acknowledged_;
  elfin::kv::Client client_;
  std::thread thread_;  // last: it uses the members above
};

}  // namespace

TEST_CASE("kv placement: with a manager and replication factor 3 on 3 pods, every shard is on 3 pods and serves",
          "[integration][kv]") {
  PlacedCluster cluster(3);
  CHECK(std::filesystem::exists(std::filesystem::path(cluster.dir()) / "manager.pid"));
  const auto put = cluster.kv({"put", "user:42", "alice"});
  INFO(put.err);
  REQUIRE(put.code == 0);
  const auto got = cluster.kv({"get", "user:42"});
  REQUIRE(got.code == 0);
  CHECK_THAT(got.out, Catch::EndsWith("\nalice\n"));

  auto client = elfin::test::kv_client(cluster.pods(), 60001);
  if (!client) FAIL(client.error());
  write_keys(*client, 64);
  for (int i = 0; i < 64; ++i) CHECK(client->get(fmt::format("k{}", i)).value().value == fmt::format("v{}", i));
  CHECK(eventually(
      [&] {
        return cluster.replica_counts() ==
               std::map<std::string, int>{{"kv-pod-1", kShards}, {"kv-pod-2", kShards}, {"kv-pod-3", kShards}};
      },
      20s));
  Statuses statuses(cluster.pods(), 60021);
  CHECK(eventually([&] { return statuses.all_on({1, 2, 3}); }, 20s));
}

TEST_CASE("kv placement: a 4th pod receives its share of replicas under a writer and no acknowledged write is lost",
          "[integration][kv]") {
  PlacedCluster cluster(3, 1);
  // Shards first written once every pod is in the map start on their final three pods.
  REQUIRE(eventually([&] { return cluster.replica_counts().size() == 3; }, 20s));
  {
    auto client = elfin::test::kv_client(cluster.pods(), 60002);
    if (!client) FAIL(client.error());
    write_keys(*client, 64);
  }
  auto writer_client = elfin::test::kv_client(cluster.pods(), 60011);
  if (!writer_client) FAIL(writer_client.error());
  Writer writer(std::move(*writer_client));
  REQUIRE(eventually([&] { return writer.acknowledged() >= 50; }, 20s));

  const auto added_at = std::chrono::steady_clock::now();
  const std::size_t before = writer.acknowledged();
  const auto added = cluster.add_pod();
  INFO(added.out << added.err);
  REQUIRE(added.code == 0);
  // The manager's map: 16 x 3 replicas over 4 pods, 12 each.
  REQUIRE(eventually([&] { return cluster.replica_counts()["kv-pod-4"] == 12; }, 30s));
  const auto mapped = std::chrono::steady_clock::now() - added_at;
  // The pod holds them: each leader added it (it caught up from a snapshot) and promoted it.
  Statuses statuses(cluster.pods(), 60022);
  REQUIRE(eventually([&] { return statuses.voter_of(4) == 12; }, 30s));
  const auto holding = std::chrono::steady_clock::now() - added_at;
  REQUIRE(eventually([&] { return writer.acknowledged() >= before + 50; }, 20s));
  writer.stop();
  WARN("a 4th pod: in the manager's map after "
       << std::chrono::duration_cast<std::chrono::milliseconds>(mapped).count() << " ms, holding its 12 replicas after "
       << std::chrono::duration_cast<std::chrono::milliseconds>(holding).count() << " ms; "
       << writer.acknowledged() - before << " writes acknowledged from the add to the end, " << writer.failed()
       << " failed");

  auto client = elfin::test::kv_client(cluster.pods(), 60003);
  if (!client) FAIL(client.error());
  for (int i = 0; i < 64; ++i) {
    INFO(i);
    CHECK(client->get(fmt::format("k{}", i)).value().value == fmt::format("v{}", i));
  }
  for (const auto& key : writer.keys()) {
    INFO(key);
    CHECK(client->get(key).value().value == key.substr(1));
  }
}

TEST_CASE("kv placement: a killed pod's replicas are re-created on the remaining pods", "[integration][kv]") {
  PlacedCluster cluster(4);
  REQUIRE(eventually(
      [&] {
        return cluster.replica_counts() ==
               std::map<std::string, int>{{"kv-pod-1", 12}, {"kv-pod-2", 12}, {"kv-pod-3", 12}, {"kv-pod-4", 12}};
      },
      20s));
  auto client = elfin::test::kv_client(cluster.pods(), 60004);
  if (!client) FAIL(client.error());
  write_keys(*client, 64);
  Statuses statuses(cluster.pods(), 60023);
  REQUIRE(eventually([&] { return statuses.voter_of(4) == 12; }, 30s));

  const auto killed_at = std::chrono::steady_clock::now();
  REQUIRE(cluster.signal(4, SIGKILL));
  // The health check drops pod 4; each of its shards gets a replica on the pod that lacked one,
  // promoted before pod 4's replica is removed.
  REQUIRE(eventually([&] { return statuses.all_on({1, 2, 3}); }, 40s));
  WARN("a killed pod's replicas re-created on the other 3 after "
       << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at).count()
       << " ms");
  auto fresh = elfin::test::kv_client({cluster.pods()[0], cluster.pods()[1], cluster.pods()[2]}, 60005);
  if (!fresh) FAIL(fresh.error());
  for (int i = 0; i < 64; ++i) {
    INFO(i);
    CHECK(fresh->get(fmt::format("k{}", i)).value().value == fmt::format("v{}", i));
  }
  REQUIRE(fresh->put("after", "kill"));
}
