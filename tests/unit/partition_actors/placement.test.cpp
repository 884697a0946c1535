// Partitions placed by a table (config placement = "assignment"), four nodes in one process over
// loopback TCP with real WAL files: a partition exists only on the nodes its table entry names,
// its owner creates it with those voters (once no node holds any of it), and a new entry moves it (learner, promotion,
// leadership handed over, removal) while a writer keeps writing, losing no acknowledged write.
// The membership requests (AddReplica, RemoveReplica, TransferLeader) are driven directly too. A
// replica removed from the membership ends, deleting its snapshot files and releasing its WAL log.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/protocols/wal.hpp>

#include "cluster.hpp"

using namespace partition_test;

namespace {

namespace pw = elfin::protocols::wal;
using Nodes = std::vector<std::uint64_t>;

/// Four nodes whose partitions are placed by the table; the reconciler looks every `reconcile`
/// ticks (20 ms each); a snapshot every 50 entries, so a new replica catches up from one.
ClusterOptions placed(std::uint32_t reconcile = 5) {
  ClusterOptions options;
  options.nodes = 4;
  options.partition_extra =
      fmt::format("placement = \"assignment\"\nreconcile_ticks = {}\nsnapshot_every = 50", reconcile);
  return options;
}

/// Sends table `epoch` (partition -> its replicas, the owner first) to every running node.
void place(Cluster& cluster, std::uint64_t epoch, const std::map<std::uint64_t, Nodes>& table) {
  pr::Placement placement;
  placement.epoch = epoch;
  for (const auto& [partition, nodes] : table) {
    if (placement.replicas.size() <= partition) placement.replicas.resize(partition + 1);
    placement.replicas[partition] = nodes;
  }
  for (std::uint16_t n : cluster.node_numbers()) {
    if (cluster.running(n)) cluster.node(n).send_to(cluster.node(n).system().group_addr("partitions"), placement);
  }
}

/// Proposes a put at `node`, following NotLeader hints among `nodes`, until acknowledged or the
/// deadline; the acknowledged entry's index, or nullopt (not acknowledged: outcome unknown).
std::optional<std::uint64_t> put_at(Cluster& cluster, std::uint64_t partition, std::uint16_t& node,
                                    const std::string& key, const std::string& value,
                                    std::chrono::milliseconds timeout = 15s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto answer = cluster.propose(node, partition, put(key, value));
    if (answer) return answer->index;
    const auto& error = answer.error();
    if (error.kind == pr::RaftErrorKind::NotLeader && error.leader_hint != 0) {
      node = static_cast<std::uint16_t>(error.leader_hint);
    } else {
      std::this_thread::sleep_for(20ms);  // an election under way: ask again shortly
    }
  }
  return std::nullopt;
}

/// The value of `key` read linearizably at the partition's leader (found among `nodes`).
std::optional<std::string> read_at_leader(Cluster& cluster, std::uint64_t partition, const Nodes& nodes,
                                          const std::string& key) {
  std::optional<std::string> value;
  eventually(
      [&] {
        for (std::uint64_t n : nodes) {
          auto answer = cluster.read(static_cast<std::uint16_t>(n), partition, get(key));
          if (!answer) continue;
          const auto response = pk::decode_kv_response(answer->response);
          value = response.found ? std::optional<std::string>(response.value) : std::nullopt;
          return true;
        }
        return false;
      },
      15s);
  return value;
}

/// Every node of `nodes` has membership voters = `voters` and no learner, and one of them leads.
bool membership_is(Cluster& cluster, std::uint64_t partition, Nodes voters, std::chrono::milliseconds timeout = 20s) {
  std::sort(voters.begin(), voters.end());
  return eventually(
      [&] {
        bool led = false;
        for (std::uint64_t n : voters) {
          auto s = cluster.status(static_cast<std::uint16_t>(n), partition);
          if (!s) return false;
          auto have = s->conf.voters;
          std::sort(have.begin(), have.end());
          if (have != voters || !s->conf.learners.empty()) return false;
          led = led || s->role == pr::Role::Leader;
        }
        return led;
      },
      timeout);
}

bool has_files(Cluster& cluster, std::uint16_t node, std::uint64_t partition) {
  return std::filesystem::exists(std::filesystem::path(cluster.snapshot_dir(node)) / std::to_string(partition));
}

}  // namespace

TEST_CASE("kv placement: a partition lives only on its table's nodes, bootstrapped by its owner with them as voters",
          "[partition_actors]") {
  Cluster cluster(placed());
  place(cluster, 1, {{0, {1, 2, 3}}, {1, {4, 2, 3}}});

  std::uint16_t at = 1;
  REQUIRE(put_at(cluster, 0, at, "a", "v0"));
  at = 4;
  REQUIRE(put_at(cluster, 1, at, "b", "v1"));
  CHECK(membership_is(cluster, 0, {1, 2, 3}));
  CHECK(membership_is(cluster, 1, {2, 3, 4}));
  CHECK(read_at_leader(cluster, 0, {1, 2, 3}, "a") == "v0");
  CHECK(read_at_leader(cluster, 1, {2, 3, 4}, "b") == "v1");

  // A stray request at a node outside the table: a redirect to the owner, nothing on disk, no
  // vote in the group.
  auto stray = cluster.propose(4, 0, put("a", "stray"));
  REQUIRE_FALSE(stray);
  CHECK(stray.error().kind == pr::RaftErrorKind::NotLeader);
  CHECK(stray.error().leader_hint == 1);
  auto stale = cluster.read(1, 1, get("b"), true);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().leader_hint == 4);
  CHECK(has_files(cluster, 1, 0));
  CHECK(has_files(cluster, 2, 0));
  CHECK(has_files(cluster, 3, 0));
  CHECK_FALSE(has_files(cluster, 4, 0));
  CHECK_FALSE(has_files(cluster, 1, 1));
  CHECK(has_files(cluster, 4, 1));
  auto outsider = cluster.status(4, 0);
  REQUIRE(outsider);
  CHECK(outsider->conf.voters.empty());
}

TEST_CASE(
    "kv placement: a new table moves a partition (learner, snapshot, promotion, leadership, removal) "
    "under a concurrent writer and loses no acknowledged write",
    "[partition_actors]") {
  Cluster cluster(placed());
  place(cluster, 1, {{0, {1, 2, 3}}});
  std::uint16_t first = 1;
  REQUIRE(put_at(cluster, 0, first, "k-start", "start"));

  std::mutex mutex;
  std::map<std::string, std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    std::uint16_t at = 1;
    for (int i = 0; !stop; ++i) {
      const std::string key = fmt::format("k{}", i % 40);
      const std::string value = fmt::format("v{}", i);
      if (put_at(cluster, 0, at, key, value, 5s)) {
        std::lock_guard lock(mutex);
        acknowledged[key] = value;
        ++written;
      } else {
        // The outcome is unknown: later writes to the key decide what it holds.
        std::lock_guard lock(mutex);
        acknowledged.erase(key);
      }
    }
  });
  REQUIRE(eventually([&] { return written >= 100; }, 20s));  // past a snapshot: node 4 needs one

  const auto moved_at = std::chrono::steady_clock::now();
  const int before = written;
  place(cluster, 2, {{0, {2, 3, 4}}});  // the owner (most likely the leader) leaves
  const bool moved = membership_is(cluster, 0, {2, 3, 4});
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - moved_at);
  REQUIRE(eventually([&] { return written >= before + 50; }, 20s));  // writes go on at the new leader
  stop = true;
  writer.join();
  REQUIRE(moved);
  WARN("move of a 3-replica partition to a new node: " << took.count() << " ms, " << (written - before)
                                                       << " writes acknowledged during and after it");

  CHECK(cluster.applied().restores(4, 0) >= 1);  // node 4 caught up from a snapshot
  for (const auto& [key, value] : acknowledged) {
    INFO(key);
    CHECK(read_at_leader(cluster, 0, {2, 3, 4}, key) == value);
  }
  auto left = cluster.status(1, 0);
  REQUIRE(left);
  CHECK(left->role != pr::Role::Leader);
}

TEST_CASE("partition actors: AddReplica (learner, then voter), TransferLeader and RemoveReplica move a replica",
          "[partition_actors]") {
  // The reconciler never looks (one step per 10^6 ticks): the requests alone move the replica.
  Cluster cluster(placed(1'000'000));
  place(cluster, 1, {{0, {1, 2, 3}}});
  std::uint16_t leader = 1;
  for (int i = 0; i < 60; ++i) REQUIRE(put_at(cluster, 0, leader, fmt::format("k{}", i), fmt::format("v{}", i)));

  const auto ask_leader = [&](auto request) {
    auto answer = cluster.ask(leader, request);
    for (int i = 0; i < 20 && answer && !*answer && answer->error().kind == pr::RaftErrorKind::NotLeader; ++i) {
      if (answer->error().leader_hint != 0) leader = static_cast<std::uint16_t>(answer->error().leader_hint);
      answer = cluster.ask(leader, request);
    }
    REQUIRE(answer);
    return std::move(*answer);
  };

  auto learner = ask_leader(pr::AddReplica{0, 4, true});
  REQUIRE(learner);
  CHECK(learner->conf.learners == Nodes{4});
  // A learner does not vote: the three voters stay the quorum.
  CHECK(learner->conf.voters.size() == 3);
  REQUIRE(cluster.all_applied(0, learner->index));

  auto voter = ask_leader(pr::AddReplica{0, 4, false});
  REQUIRE(voter);
  CHECK(voter->conf.learners.empty());
  CHECK(std::find(voter->conf.voters.begin(), voter->conf.voters.end(), 4) != voter->conf.voters.end());
  REQUIRE(cluster.all_applied(0, voter->index));

  auto transferred = ask_leader(pr::TransferLeader{0, 4});
  REQUIRE(transferred);
  CHECK(transferred->leader == 4);
  leader = 4;
  REQUIRE(put_at(cluster, 0, leader, "after", "transfer"));  // the new leader committed in its term

  // The leader refuses to remove what is no member.
  auto nonsense = ask_leader(pr::RemoveReplica{0, 9});
  REQUIRE_FALSE(nonsense);
  CHECK(nonsense.error().kind == pr::RaftErrorKind::BadRequest);

  auto removed = ask_leader(pr::RemoveReplica{0, 1});
  REQUIRE(removed);
  auto voters = removed->conf.voters;
  std::sort(voters.begin(), voters.end());
  CHECK(voters == Nodes{2, 3, 4});
  for (int i = 0; i < 60; ++i) {
    INFO(i);
    CHECK(read_at_leader(cluster, 0, {4, 2, 3}, fmt::format("k{}", i)) == fmt::format("v{}", i));
  }
}

TEST_CASE("kv placement: a node that became owner while it ran joins the existing group instead of creating one",
          "[partition_actors]") {
  Cluster cluster(placed());
  place(cluster, 1, {{0, {1, 2, 3}}, {1, {1, 2, 3}}});
  std::uint16_t at = 1;
  REQUIRE(put_at(cluster, 0, at, "a", "v0"));  // partition 0's group exists on 1, 2, 3
  // Both change owner to node 4, which holds nothing of either yet.
  place(cluster, 2, {{0, {4, 2, 3}}, {1, {4, 2, 3}}});
  // Partition 1 on node 4, started now: blank while it asks the table's other nodes whether
  // they hold it (bootstrapping at once would have made it a voter of a group of its own).
  auto waiting = cluster.status(4, 1);
  REQUIRE(waiting);
  CHECK(waiting->conf.voters.empty());

  // Partition 0: the request reaching node 4 first does not make it bootstrap a second group
  // (nodes 2 and 3 hold it); the leader adds it (learner, then voter) and removes node 1, and
  // the old write is there.
  auto early = cluster.propose(4, 0, put("a", "early"));
  REQUIRE_FALSE(early);
  CHECK(early.error().kind == pr::RaftErrorKind::NotLeader);
  CHECK(membership_is(cluster, 0, {2, 3, 4}));
  CHECK(read_at_leader(cluster, 0, {2, 3, 4}, "a") == "v0");
  // Node 4's own replica holds the group's write (not a group of its own).
  CHECK(eventually([&] {
    auto stale = cluster.read(4, 0, get("a"), true);
    return stale && pk::decode_kv_response(stale->response).value == "v0";
  }));

  // Partition 1, never written: no node holds anything of it, so node 4 creates it.
  at = 4;
  REQUIRE(put_at(cluster, 1, at, "b", "v1"));
  CHECK(membership_is(cluster, 1, {2, 3, 4}));
  CHECK_FALSE(has_files(cluster, 1, 1));
}

TEST_CASE(
    "kv placement: a removed replica stops, deletes its snapshot files and releases its WAL log, "
    "and re-added it starts clean and keeps what it caught up across a restart",
    "[partition_actors]") {
  Cluster cluster(placed());
  place(cluster, 1, {{0, {1, 2, 3}}});
  std::uint16_t at = 1;
  for (int i = 0; i < 120; ++i) REQUIRE(put_at(cluster, 0, at, fmt::format("k{}", i % 30), fmt::format("v{}", i)));
  // Past two snapshots (one every 50 entries): node 1 holds snapshot files and a WAL log.
  REQUIRE(eventually([&] { return std::filesystem::exists(cluster.snapshot_dir(1) + "/0"); }));
  const auto node1_before = cluster.status(1, 0);
  REQUIRE(node1_before);
  REQUIRE(node1_before->last_index >= 120);

  place(cluster, 2, {{0, {2, 3, 4}}});
  REQUIRE(membership_is(cluster, 0, {2, 3, 4}));

  // Node 1 applied its removal: its snapshot directory is gone, a marker says up to where its
  // WAL log was released, and the WAL holds nothing of the partition any more.
  const std::string marker = cluster.snapshot_dir(1) + "/0.released";
  CHECK(eventually([&] { return !has_files(cluster, 1, 0) && std::filesystem::exists(marker); }));
  CHECK(eventually([&] {
    auto range = cluster.node(1).request_fallible(pw::ReadRange{0, 1, UINT64_MAX, 0},
                                                  cluster.node(1).system().group_addr("wal"));
    return range && *range && range->value().entries.empty() && range->value().last_index == 0;
  }));
  // The old actor ended: asked again, the group starts a blank one (no membership, no log).
  std::optional<pr::PartitionStatus> blank;
  CHECK(eventually([&] { return (blank = cluster.status(1, 0)).has_value(); }));
  REQUIRE(blank);
  CHECK(blank->conf.voters.empty());
  CHECK(blank->last_index == 0);
  CHECK(blank->applied == 0);

  // Re-added (a fourth replica), it catches up from a snapshot and serves what was written.
  const std::size_t restores_before = cluster.applied().restores(1, 0);
  place(cluster, 3, {{0, {2, 3, 4, 1}}});
  REQUIRE(membership_is(cluster, 0, {1, 2, 3, 4}));
  at = 2;
  REQUIRE(put_at(cluster, 0, at, "after", "re-add"));
  CHECK(cluster.applied().restores(1, 0) > restores_before);
  const auto stale_at_1 = [&](const std::string& key) -> std::optional<std::string> {
    auto answer = cluster.read(1, 0, get(key), true);
    if (!answer) return std::nullopt;
    return pk::decode_kv_response(answer->response).value;
  };
  CHECK(eventually([&] { return stale_at_1("after") == "re-add"; }));
  CHECK(stale_at_1("k29") == "v119");

  // Restarted, it recovers the same from its new snapshot and WAL entries.
  cluster.stop(1);
  cluster.start(1);
  REQUIRE(cluster.connected(1));
  place(cluster, 3, {{0, {2, 3, 4, 1}}});
  CHECK(eventually([&] { return stale_at_1("after") == "re-add"; }, 15s));
  CHECK(stale_at_1("k29") == "v119");
  at = 2;
  REQUIRE(put_at(cluster, 0, at, "after-restart", "yes"));
  CHECK(eventually([&] { return stale_at_1("after-restart") == "yes"; }, 15s));
}

TEST_CASE("kv placement: a released replica grants no vote until a snapshot past its release makes it a replica again",
          "[partition_actors]") {
  Cluster cluster(placed());
  place(cluster, 1, {{0, {1, 2, 3}}});
  std::uint16_t at = 1;
  for (int i = 0; i < 60; ++i) REQUIRE(put_at(cluster, 0, at, fmt::format("k{}", i % 10), fmt::format("v{}", i)));
  place(cluster, 2, {{0, {2, 3, 4}}});
  REQUIRE(membership_is(cluster, 0, {2, 3, 4}));
  const std::string marker = cluster.snapshot_dir(1) + "/0.released";
  REQUIRE(eventually([&] { return !has_files(cluster, 1, 0) && std::filesystem::exists(marker); }));
  std::optional<pr::PartitionStatus> blank;
  REQUIRE(eventually([&] { return (blank = cluster.status(1, 0)).has_value() && blank->last_index == 0; }));
  REQUIRE(blank->applied == 0);

  // A candidate whose log ends at index 2 (a replica restarted from the bootstrap's early state):
  // to the blank replica any log looks up to date, so granting would hand it a vote it must not
  // get. Node 7 is no node of the cluster: the answer, if any, goes nowhere.
  pr::RaftMessage vote;
  vote.partition = 0;
  vote.type = pr::MessageType::Vote;
  vote.from = 7;
  vote.to = 1;
  vote.term = blank->term + 10;
  vote.log_term = 1;
  vote.index = 2;
  cluster.node(1).send_to(cluster.node(1).system().group_addr("partitions"), vote);
  // Taken after the vote request (same sender, same actor): a step would have raised the term.
  const auto after = cluster.status(1, 0);
  REQUIRE(after);
  CHECK(after->term == blank->term);
  CHECK(after->last_index == 0);

  // Re-added, it installs a snapshot past what it released and votes again as a member.
  place(cluster, 3, {{0, {2, 3, 4, 1}}});
  REQUIRE(membership_is(cluster, 0, {1, 2, 3, 4}));
  at = 2;
  REQUIRE(put_at(cluster, 0, at, "after", "re-add"));
  const auto member = cluster.status(1, 0);
  REQUIRE(member);
  CHECK(member->applied >= 60);
}
