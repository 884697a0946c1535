// A partition's own snapshot files are written off the actor workers: while a replica's snapshot
// write is held (the writer's test hook), the partition keeps committing and answering; the
// snapshot becomes the partition's only once the file is durable, and no two snapshot writes of
// one partition ever overlap.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <catch2/catch.hpp>

#include "cluster.hpp"
#include "snapshot_writer.hpp"

using namespace partition_test;
namespace api = elfin::actors::partition::internal;

namespace {

constexpr std::uint64_t kPartition = 5;

/// Holds every snapshot write of one partition (all replicas) until opened; counts the writes
/// held and the most that ran at once in one directory. Opening it (also when the test fails)
/// lets the held writes go before the cluster stops.
class HeldWrites {
 public:
  HeldWrites() {
    api::set_snapshot_write_hook([this](const std::string& dir, std::uint64_t index) { hold(dir, index); });
  }
  HeldWrites(const HeldWrites&) = delete;
  HeldWrites& operator=(const HeldWrites&) = delete;
  ~HeldWrites() {
    open();
    api::set_snapshot_write_hook(nullptr);
  }

  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  [[nodiscard]] std::uint64_t lowest_held_index() {
    std::lock_guard lock(mu_);
    return lowest_held_;
  }
  [[nodiscard]] int most_at_once() {
    std::lock_guard lock(mu_);
    return most_at_once_;
  }

 private:
  void hold(const std::string& dir, std::uint64_t index) {
    if (!dir.ends_with(fmt::format("/{}", kPartition))) return;
    std::unique_lock lock(mu_);
    const int running = ++running_[dir];
    most_at_once_ = std::max(most_at_once_, running);
    if (!open_) lowest_held_ = lowest_held_ == 0 ? index : std::min(lowest_held_, index);
    // Bounded, so that a broken partition cannot hang the test run.
    cv_.wait_for(lock, 60s, [this] { return open_; });
    --running_[dir];
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::uint64_t lowest_held_ = 0;
  std::map<std::string, int> running_;
  int most_at_once_ = 0;
};

}  // namespace

TEST_CASE("partition actors: a partition commits and answers while its snapshot file is being written",
          "[partition_actors]") {
  ClusterOptions options;
  options.partition_extra = "snapshot_every = 8\n";
  options.proxy_timeout = 5s;
  Cluster cluster(options);
  HeldWrites held;  // destroyed before the cluster: the held writes finish first
  auto leader = cluster.leader(kPartition);
  REQUIRE(leader);

  // Past snapshot_every: every replica starts a snapshot write, and it is held.
  int acknowledged = 0;
  auto propose = [&](const std::string& value) {
    auto answer = cluster.propose(*leader, kPartition, put("k", value));
    if (!answer && answer.error().kind == pr::RaftErrorKind::NotLeader) {
      leader = cluster.leader(kPartition);  // a leader change on a loaded machine: try once more
      if (leader) answer = cluster.propose(*leader, kPartition, put("k", value));
    }
    acknowledged += answer ? 1 : 0;
    return static_cast<bool>(answer);
  };
  for (int i = 0; i < 10; ++i) propose(fmt::format("a-{}", i));
  REQUIRE(eventually([&] { return held.lowest_held_index() != 0; }));
  const std::uint64_t held_index = held.lowest_held_index();

  // The writes stay held: the partition still commits, applies on every replica and answers.
  for (int i = 0; i < 20; ++i) propose(fmt::format("b-{}", i));
  CHECK(acknowledged >= 28);
  REQUIRE(leader);
  auto status = cluster.status(*leader, kPartition);
  REQUIRE(status);
  CHECK(status->commit >= held_index + 19);
  CHECK(cluster.all_applied(kPartition, status->commit));
  // Not durable yet: not the partition's snapshot.
  CHECK(status->snapshot_index < held_index);

  held.open();
  CHECK(eventually([&] {
    auto now = cluster.status(*leader, kPartition);
    return now && now->snapshot_index >= held_index;
  }));
  CHECK(held.most_at_once() == 1);
}
