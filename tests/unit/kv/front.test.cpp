// The KV front on three nodes in one process, connected over loopback TCP, each mounted from the
// pod topology `elfin kv cluster start` writes (so the registry's names and node selectors are
// exercised too), with real WAL files in a temporary directory. The test talks to each node's
// front by its group address through that node's proxy.
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/kv.hpp>
#include <elfin/actors/partition.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/elfin.hpp>
#include <elfin/kv/cluster_files.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/kv.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/testing/proxy.hpp>
#include <elfin/topology_file.hpp>

#include "../eventually.hpp"
#include "../partition_actors/cluster.hpp"

namespace {

namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using namespace std::chrono_literals;
using elfin::test::eventually;

elfin::BlueprintRegistry pod_registry() {
  elfin::BlueprintRegistry registry;
  elfin::network::register_blueprints(registry);
  elfin::actors::wal::register_blueprints(registry);
  elfin::actors::partition::register_blueprints(registry);
  elfin::actors::kv::register_blueprints(registry);
  return registry;
}

/// Node `n` as the shipped pod topology mounts it.
elfin::Topology pod_topology(std::uint16_t n) {
  static const elfin::BlueprintRegistry registry = pod_registry();
  elfin::kv::ClusterLayout layout;
  layout.observability = false;  // three nodes in one process: one telemeter port, one dump file
  auto file = elfin::parse_topology_file(elfin::kv::pod_topology(layout, n), fmt::format("pod-{}.toml", n), registry);
  if (!file) FAIL(file.error().message());
  return std::move(file->topology);
}

/// The partition tests' three-node cluster (loopback TCP, real WAL files), each node a pod.
class KvCluster : public partition_test::Cluster {
 public:
  explicit KvCluster(const std::string& kv_extra = {})
      : Cluster({.nodes = 3,
                 .partition_extra = {},
                 .topology = pod_topology,
                 .extra_config = "[kv]\nnodes = [1, 2, 3]\n" + kv_extra + "\n",
                 .proxy_timeout = 30s}) {}

  /// A request to node `n`'s KV front; an unanswered request fails the test.
  template <class R>
  typename R::Response ask(std::uint16_t n, R request) {
    auto answer = node(n).request_fallible(std::move(request), node(n).system().group_addr("kv"));
    if (!answer) FAIL("the front of node " << n << " gave no answer: " << elfin::to_string(answer.error()));
    return std::move(*answer);
  }
};

}  // namespace

TEST_CASE("kv: put, get, cas, delete-if-version and delete through any node's front, with versions", "[kv]") {
  KvCluster cluster;
  const auto put = cluster.ask(1, pk::Put{"user:42", "alice"});
  REQUIRE(put);
  CHECK(put->version > 0);

  // Every front answers for every key; reads are linearizable, so the write is seen at once.
  for (std::uint16_t n = 1; n <= 3; ++n) {
    const auto got = cluster.ask(n, pk::Get{"user:42", false});
    REQUIRE(got);
    CHECK(*got == pk::Found{true, "alice", put->version});
  }

  const auto stale_cas = cluster.ask(2, pk::Cas{"user:42", "bob", put->version + 100});
  REQUIRE_FALSE(stale_cas);
  CHECK(stale_cas.error().kind == pk::KvErrorKind::VersionMismatch);
  CHECK(stale_cas.error().current_version == put->version);

  const auto cas = cluster.ask(3, pk::Cas{"user:42", "bob", put->version});
  REQUIRE(cas);
  CHECK(cas->version > put->version);
  CHECK(cluster.ask(1, pk::Get{"user:42", false})->value == "bob");

  const auto create = cluster.ask(1, pk::Cas{"user:43", "carol", 0});
  REQUIRE(create);
  const auto exists = cluster.ask(1, pk::Cas{"user:43", "dave", 0});
  REQUIRE_FALSE(exists);
  CHECK(exists.error().current_version == create->version);

  const auto refused = cluster.ask(2, pk::DeleteIfVersion{"user:42", put->version});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == pk::KvErrorKind::VersionMismatch);
  CHECK(refused.error().current_version == cas->version);
  const auto deleted = cluster.ask(2, pk::DeleteIfVersion{"user:42", cas->version});
  REQUIRE(deleted);
  CHECK(deleted->existed);
  CHECK_FALSE(cluster.ask(3, pk::Get{"user:42", false})->found);

  CHECK(cluster.ask(3, pk::Delete{"user:43"})->existed);
  CHECK_FALSE(cluster.ask(3, pk::Delete{"user:43"})->existed);

  const auto empty = cluster.ask(1, pk::Put{"", "x"});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().kind == pk::KvErrorKind::BadRequest);
}

TEST_CASE("kv: a front whose node does not lead the shard follows the NotLeader hint to the leader", "[kv]") {
  KvCluster cluster;
  REQUIRE(cluster.ask(1, pk::Put{"hinted", "1"}));  // creates the shard's partitions
  const auto shard = elfin::actors::kv::shard_of("hinted");
  const auto leader = cluster.leader(shard);
  REQUIRE(leader);
  // The replicas on the other nodes answer a proposal with NotLeader: a front there must follow
  // the hint (its first attempt goes to its own replica, which does not lead).
  for (std::uint16_t n = 1; n <= 3; ++n) {
    if (n == *leader) continue;
    auto direct =
        cluster.node(n).request_fallible(pr::Propose{shard, {1}}, cluster.node(n).system().group_addr("partitions"));
    REQUIRE(direct);
    REQUIRE_FALSE(*direct);
    CHECK(direct->error().kind == pr::RaftErrorKind::NotLeader);
    const auto put = cluster.ask(n, pk::Put{"hinted", fmt::format("from {}", n)});
    REQUIRE(put);
    CHECK(cluster.ask(n, pk::Get{"hinted", false})->value == fmt::format("from {}", n));
  }
  // A stale read answers from the asked node's own replica, without the leader.
  const auto every_replica_has_the_last_put = [&] {
    for (std::uint16_t n = 1; n <= 3; ++n) {
      auto got = cluster.ask(n, pk::Get{"hinted", true});
      if (!got || got->value != fmt::format("from {}", *leader == 3 ? 2 : 3)) return false;
    }
    return true;
  };
  CHECK(eventually(every_replica_has_the_last_put));
}

TEST_CASE("kv: a scan over every shard merges the shards' keys in key order up to the limit", "[kv]") {
  // 16 shards: a scan over every shard creates every shard's Raft group on each node, and 3 x 1024
  // partition actors in one process are too many for a test (the integration test scans the
  // shipped 1024 across three processes).
  constexpr std::uint32_t kShards = 16;
  KvCluster cluster(R"(shards = 16)");
  std::vector<std::string> keys;
  keys.reserve(12);
  for (int i = 0; i < 12; ++i) keys.push_back(fmt::format("scan:{:02}", i));
  std::set<pk::ShardId> shards;
  for (const auto& key : keys) {
    REQUIRE(cluster.ask(static_cast<std::uint16_t>(1 + shards.size() % 3), pk::Put{key, "v" + key}));
    shards.insert(elfin::actors::kv::shard_of(key, kShards));
  }
  REQUIRE(cluster.ask(1, pk::Put{"other", "x"}));
  REQUIRE(shards.size() > 5);  // the keys really are spread over shards

  pk::Scan all;
  all.prefix = "scan:";
  all.limit = 100;
  const auto scanned = cluster.ask(2, all);
  if (!scanned) FAIL(pk::to_string(scanned.error()));
  REQUIRE(scanned->entries.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(scanned->entries[i].key == keys[i]);
  CHECK(scanned->entries[3].value == "v" + keys[3]);
  CHECK(scanned->entries[3].version > 0);
  CHECK_FALSE(scanned->more);

  pk::Scan first_five = all;
  first_five.limit = 5;
  const auto limited = cluster.ask(3, first_five);
  REQUIRE(limited);
  REQUIRE(limited->entries.size() == 5);
  CHECK(limited->entries[4].key == keys[4]);
  CHECK(limited->more);

  // One shard only: the keys of that shard.
  pk::Scan one = all;
  one.shard = elfin::actors::kv::shard_of(keys[0], kShards);
  const auto in_shard = cluster.ask(1, one);
  REQUIRE(in_shard);
  REQUIRE_FALSE(in_shard->entries.empty());
  for (const auto& entry : in_shard->entries) CHECK(elfin::actors::kv::shard_of(entry.key, kShards) == *one.shard);
  CHECK(in_shard->entries.front().key == keys[0]);

  pk::Scan beyond = all;
  beyond.shard = kShards;
  const auto no_such_shard = cluster.ask(1, beyond);
  REQUIRE_FALSE(no_such_shard);
  CHECK(no_such_shard.error().kind == pk::KvErrorKind::BadRequest);

  pk::Scan zero = all;
  zero.limit = 0;
  const auto bad = cluster.ask(1, zero);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == pk::KvErrorKind::BadRequest);
}

TEST_CASE(
    "kv: with one of three nodes stopped the fronts keep serving, and without a majority a write is refused by its "
    "deadline",
    "[kv]") {
  KvCluster cluster(R"(request_timeout = "1500ms")");
  REQUIRE(cluster.ask(1, pk::Put{"k", "before"}));
  const auto shard = elfin::actors::kv::shard_of("k");
  const auto leader = cluster.leader(shard);
  REQUIRE(leader);
  // Stop the leader: the others elect a new one and the fronts find it.
  cluster.stop(*leader);
  const std::uint16_t other = *leader == 1 ? 2 : 1;
  elfin::Result<pk::Written, pk::KvError> put = elfin::Err{pk::KvError{}};
  CHECK(eventually(
      [&] {
        put = cluster.ask(other, pk::Put{"k", "after"});
        return static_cast<bool>(put);
      },
      15s));
  CHECK(cluster.ask(other, pk::Get{"k", false})->value == "after");

  // Stop a second node: no majority; the write answers Timeout or Unavailable within its deadline.
  const std::uint16_t last = 6 - *leader - other;
  cluster.stop(other);
  const auto refused = cluster.ask(last, pk::Put{"k", "lost"});
  REQUIRE_FALSE(refused);
  CHECK((refused.error().kind == pk::KvErrorKind::Timeout || refused.error().kind == pk::KvErrorKind::Unavailable));
}

TEST_CASE("kv: a write sent again with the client's request id to another front is applied once", "[kv]") {
  KvCluster cluster;
  // The client's first attempt reached node 1's front and was applied; its answer was lost, so
  // the client sends the same request (the same id) to node 2, after another client's write.
  const pk::Put put{"resent", "first", 0xC11E, 1};
  const auto first = cluster.ask(1, put);
  REQUIRE(first);
  const auto other = cluster.ask(3, pk::Put{"resent", "other"});
  REQUIRE(other);
  const auto again = cluster.ask(2, put);
  REQUIRE(again);
  CHECK(again->version == first->version);  // the first application's answer
  const auto now = cluster.ask(2, pk::Get{"resent", false});
  REQUIRE(now);
  CHECK(*now == pk::Found{true, "other", other->version});  // not written over a second time

  const pk::Delete del{"resent", 0xC11E, 2};
  REQUIRE(cluster.ask(1, del)->existed);
  const auto recreated = cluster.ask(3, pk::Put{"resent", "new"});
  REQUIRE(recreated);
  CHECK(cluster.ask(2, del)->existed);  // the first answer again, and the new value stays
  CHECK(cluster.ask(1, pk::Get{"resent", false})->value == "new");
}

TEST_CASE("kv: an answer names the shard's leader and the shard count, and kv.Leaders gives the front's leader cache",
          "[kv]") {
  KvCluster cluster;
  const auto put = cluster.ask(2, pk::Put{"routed", "1"});
  REQUIRE(put);
  const auto shard = elfin::actors::kv::shard_of("routed");
  const auto leader = cluster.leader(shard);
  REQUIRE(leader);
  CHECK(put->leader == *leader);
  CHECK(put->shards == pk::kShards);
  for (std::uint16_t n = 1; n <= 3; ++n) {
    const auto got = cluster.ask(n, pk::Get{"routed", false});
    REQUIRE(got);
    CHECK(got->leader == *leader);
  }
  CHECK(cluster.ask(1, pk::Get{"routed", true})->leader == 0);  // a stale read names no leader

  for (std::uint16_t n = 1; n <= 3; ++n) {
    INFO("node " << n);
    const auto table = cluster.ask(n, pk::Leaders{});
    REQUIRE(table);
    CHECK(table->shards == pk::kShards);
    REQUIRE(table->leaders.size() == pk::kShards);
    CHECK(table->leaders[shard] == *leader);
  }
}

TEST_CASE("kv: a request before the shard manager assigned anything says that no assignment arrived yet", "[kv]") {
  // No manager node runs: the fronts register with no one and their map stays at epoch 0.
  KvCluster cluster("manager = true\nrequest_timeout = \"600ms\"");
  const auto put = cluster.ask(1, pk::Put{"k", "v"});
  REQUIRE_FALSE(put);
  CHECK(put.error().kind == pk::KvErrorKind::Unavailable);
  CHECK_THAT(put.error().detail, Catch::Contains("no assignment from the shard manager yet") &&
                                     !Catch::Contains("has no replica in the assignment"));
}
