// The simulated cluster with the WAL actors on its simulated disks: a crash is a power loss.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/wal.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/testing/sim_cluster.hpp>
#include <elfin/wal/error.hpp>

using namespace std::chrono_literals;
namespace pw = elfin::protocols::wal;
using elfin::testing::SimCluster;
using elfin::testing::SimNode;

namespace {

SimCluster wal_cluster(std::uint64_t seed) {
  elfin::testing::SimClusterOptions options;
  options.nodes = 2;
  options.seed = seed;
  options.config = [](const SimNode& node) {
    return fmt::format("[wal]\ndir = \"{}\"\nwal_count = 2\nsegment_bytes = \"1MiB\"\n", node.disk().dir());
  };
  return SimCluster(options, [](SimNode& node) {
    elfin::Topology topology;
    auto disk = node.disk().file_system();
    topology.local("wal").mount(elfin::actors::wal::blueprint({.file_system = [disk](std::uint32_t) { return disk; }}));
    return topology;
  });
}

pw::Payload payload_of(std::uint64_t index) { return pw::Payload(16, static_cast<std::uint8_t>(index)); }

/// Appends entry `index` of `partition` on `node`; the WAL's answer.
elfin::Result<pw::Appended, pw::WalError> append(SimCluster& cluster, std::uint16_t node, std::uint64_t partition,
                                                 std::uint64_t index) {
  auto request = cluster.request(node, "wal", pw::Append{partition, 1, index, payload_of(index)});
  REQUIRE(cluster.run_until([&] { return request.done(); }, 1s));
  auto answer = request.result();
  REQUIRE(answer);
  return std::move(answer).value();
}

pw::Range read(SimCluster& cluster, std::uint16_t node, std::uint64_t partition) {
  auto request = cluster.request(node, "wal", pw::ReadRange{partition, 1, UINT64_MAX, 0});
  REQUIRE(cluster.run_until([&] { return request.done(); }, 1s));
  auto answer = request.result();
  REQUIRE(answer);
  REQUIRE(answer->ok());
  return std::move(answer).value().value();
}

}  // namespace

TEST_CASE("a crashed node keeps the WAL appends it acknowledged and loses the unsynced ones", "[sim_cluster]") {
  SimCluster cluster = wal_cluster(31);
  INFO(cluster.describe());
  for (std::uint64_t partition : {0u, 1u}) {  // both WAL actors of node 1
    for (std::uint64_t i = 1; i <= 5; ++i) CHECK(append(cluster, 1, partition, i).ok());
  }
  // The next append of partition 1 is written, but its fdatasync fails: never acknowledged.
  cluster.disk(1).with_faults([](elfin::wal::FaultFileSystem& fs) { fs.fail_syncs(elfin::wal::Errno{EIO}); });
  auto unsynced = append(cluster, 1, 1, 6);
  REQUIRE_FALSE(unsynced.ok());
  CHECK(unsynced.error().kind == pw::WalErrorKind::WalFailed);
  std::uint64_t syncs_before_crash = 0;
  cluster.disk(1).with_faults([&](elfin::wal::FaultFileSystem& fs) { syncs_before_crash = fs.syncs(); });
  CHECK(syncs_before_crash > 0);

  cluster.crash(1);
  CHECK_FALSE(cluster.is_up(1));
  cluster.restart(1);  // recovers from what the power loss left
  for (std::uint64_t partition : {0u, 1u}) {
    const pw::Range range = read(cluster, 1, partition);
    CHECK(range.last_index == 5);
    REQUIRE(range.entries.size() == 5);
    for (std::uint64_t i = 1; i <= 5; ++i) CHECK(range.entries[i - 1].payload == payload_of(i));
  }
  // The log goes on from the last acknowledged entry.
  CHECK(append(cluster, 1, 1, 6).ok());
  // Node 2 was never touched.
  CHECK(read(cluster, 2, 0).last_index == 0);
}

TEST_CASE("a torn unsynced append is cut off at recovery and what was acknowledged stays", "[sim_cluster]") {
  SimCluster cluster = wal_cluster(32);
  INFO(cluster.describe());
  for (std::uint64_t i = 1; i <= 3; ++i) REQUIRE(append(cluster, 2, 0, i).ok());
  cluster.disk(2).with_faults([](elfin::wal::FaultFileSystem& fs) { fs.fail_syncs(elfin::wal::Errno{EIO}); });
  REQUIRE_FALSE(append(cluster, 2, 0, 4).ok());  // written, never synced, never acknowledged
  // Eight bytes of the unsynced record reach the disk before the power goes: less than a record.
  cluster.crash(2, /*torn_bytes=*/8);
  cluster.restart(2);
  const pw::Range range = read(cluster, 2, 0);
  CHECK(range.last_index == 3);
  REQUIRE(range.entries.size() == 3);
  for (std::uint64_t i = 1; i <= 3; ++i) CHECK(range.entries[i - 1].payload == payload_of(i));
  CHECK(append(cluster, 2, 0, 4).ok());
  CHECK(read(cluster, 2, 0).last_index == 4);
}
