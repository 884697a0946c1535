// The WAL actors' rules, each a test: durability of what is acknowledged (through libs/wal's
// power-loss model), group commit, failure states, shutdown, recovery before work, wal_count.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include <elfin/actors/wal.hpp>
#include <elfin/actors/wal/config.hpp>
#include <elfin/messages.hpp>
#include <elfin/wal/format.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>

#include "file_systems.hpp"
#include "temp_dir.hpp"
#include "wal_actors_test_support.hpp"

namespace {

using namespace wal_test;
using elfin::test::TempDir;
using Acks = std::vector<Ack>;
using Refusals = std::vector<Refused>;
namespace aw = elfin::actors::wal;

/// The fault model keeps an image of every file it syncs: small segments keep it cheap.
constexpr const char* kSmallSegments = "segment_bytes = \"1MiB\"";

aw::Options with(std::shared_ptr<lw::FileSystem> fs) {
  aw::Options options;
  options.file_system = [fs](std::uint32_t) { return fs; };
  return options;
}

/// Waits until the WAL serving `partition` holds `n` entries not yet answered.
void wait_pending(Running& group, std::uint64_t partition, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (group.proxy.request(pw::GetStats{partition}).pending != n) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("the WAL never held " << n << " pending entries");
    std::this_thread::yield();
  }
}

bool all_done(std::size_t clients) {
  return sink().wait([&](const Acks&, const Refusals&, std::size_t done) { return done >= clients; });
}

}  // namespace

TEST_CASE("acknowledged appends survive a power loss and read back in order per partition", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  std::filesystem::create_directories(wal_dir);
  LockedFaultFs fault(wal_dir);
  constexpr std::uint64_t kPartitions = 8, kCount = 30;
  {
    Running group = start(with(fault.fs()), config(wal_dir, 1, kSmallSegments));
    for (std::uint64_t p = 0; p < kPartitions; ++p) group.run(Run{p, 1, kCount});
    REQUIRE(all_done(kPartitions));
    REQUIRE(sink().refusals().empty());
    REQUIRE(sink().acks().size() == kPartitions * kCount);
  }
  fault.with([](lw::FaultFileSystem& f) { f.power_loss(); });
  Running group = start({}, config(wal_dir));
  for (std::uint64_t p = 0; p < kPartitions; ++p) check_entries(group.read(p), 1, kCount);
}

TEST_CASE("a power cut during heavy appends loses nothing that was acknowledged", "[wal_actors]") {
  // The machine dies after n more file operations (every later one fails with EIO and changes
  // nothing), then power is lost: only what was fdatasynced stays.
  for (std::uint64_t crash_after : {3u, 40u, 150u, 400u}) {
    INFO("crash after " << crash_after << " file operations");
    TempDir dir;
    const std::string wal_dir = dir.file("wal");
    std::filesystem::create_directories(wal_dir);
    LockedFaultFs fault(wal_dir);
    constexpr std::uint64_t kPartitions = 16;
    std::map<std::uint64_t, std::uint64_t> acked;
    {
      Running group = start(with(fault.fs()), config(wal_dir, 1, "segment_bytes = \"64KiB\"\npreallocate = false"));
      group.read(0);  // recovered
      fault.with([&](lw::FaultFileSystem& f) { f.crash_after(crash_after); });
      for (std::uint64_t p = 0; p < kPartitions; ++p) group.run(Run{p, 1, 1000, 1, 200});
      REQUIRE(all_done(kPartitions));  // every client stops at its first refusal
      for (const Ack& a : sink().acks()) acked[a.partition] = std::max(acked[a.partition], a.index);
    }
    fault.with([](lw::FaultFileSystem& f) { f.power_loss(); });
    Running group = start({}, config(wal_dir, 1, "segment_bytes = \"64KiB\"\npreallocate = false"));
    for (std::uint64_t p = 0; p < kPartitions; ++p) {
      const pw::Range range = group.read(p);
      // Everything acknowledged is there; at most the one request in flight beyond it.
      REQUIRE(range.last_index >= acked[p]);
      REQUIRE(range.last_index <= acked[p] + 1);
      check_entries(range, 1, range.last_index, 200);
    }
  }
}

TEST_CASE("no append is answered before the fdatasync that covers it returned", "[wal_actors]") {
  TempDir dir;
  auto hook = std::make_shared<HookFs>(std::make_shared<lw::PosixFileSystem>());
  Running group = start(with(hook), config(dir.file("wal")));
  group.read(0);  // recovered
  hook->sync_gate.close();
  for (std::uint64_t p = 0; p < 4; ++p) group.run(Run{p, 1, 1});
  REQUIRE(hook->sync_gate.wait_held());
  wait_pending(group, 0, 4);
  group.proxy.sync();
  CHECK(sink().acks().empty());  // written, not yet synced: nobody knows
  hook->sync_gate.open();
  REQUIRE(all_done(4));
  CHECK(sink().acks().size() == 4);
}

TEST_CASE("appends arriving during an fdatasync are covered by one following fdatasync", "[wal_actors]") {
  TempDir dir;
  auto hook = std::make_shared<HookFs>(std::make_shared<lw::PosixFileSystem>());
  Running group = start(with(hook), config(dir.file("wal")));
  group.read(0);
  const std::uint64_t before = hook->syncs.load();
  constexpr std::uint64_t kClients = 64;

  SECTION("held: 64 appends, two fdatasyncs") {
    hook->sync_gate.close();
    group.run(Run{0, 1, 1});
    REQUIRE(hook->sync_gate.wait_held());  // the first append's batch is in its fdatasync
    for (std::uint64_t p = 1; p < kClients; ++p) group.run(Run{p, 1, 1});
    wait_pending(group, 0, kClients);  // the other 63 wait behind it
    hook->sync_gate.open();
    REQUIRE(all_done(kClients));
    CHECK(sink().acks().size() == kClients);
    CHECK(hook->syncs.load() - before == 2);
  }
  SECTION("free running: one fdatasync per batch") {
    for (std::uint64_t p = 0; p < kClients; ++p) group.run(Run{p, 1, 20});
    REQUIRE(all_done(kClients));
    REQUIRE(sink().acks().size() == kClients * 20);
    const pw::WalStats stats = group.proxy.request(pw::GetStats{0});
    CHECK(stats.appends == kClients * 20);
    CHECK(stats.syncs == stats.batches);
    CHECK(hook->syncs.load() - before == stats.syncs);
    CHECK(stats.batches < stats.appends);
  }
}

TEST_CASE("an fdatasync error fails every waiter of the batch and the WAL, which refuses later appends",
          "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  std::filesystem::create_directories(wal_dir);
  LockedFaultFs fault(wal_dir);
  Running group = start(with(fault.fs()), config(wal_dir, 1, kSmallSegments));
  REQUIRE(group.append(9, 1));
  fault.with([](lw::FaultFileSystem& f) { f.fail_syncs(lw::Errno{EIO}); });
  for (std::uint64_t p = 0; p < 4; ++p) group.run(Run{p, 1, 1});
  REQUIRE(all_done(4));
  CHECK(sink().acks().empty());
  for (const Refused& r : sink().refusals()) CHECK(r.kind == pw::WalErrorKind::WalFailed);
  CHECK(sink().refusals().size() == 4);

  fault.with([](lw::FaultFileSystem& f) { f.clear_faults(); });  // the disk is fine again: no retry and ack
  auto again = group.append(5, 1);
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == pw::WalErrorKind::WalFailed);
  CHECK(group.proxy.request(pw::GetStats{0}).failed);
  auto read = group.proxy.request(pw::ReadRange{9, 0, UINT64_MAX, 0});
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == pw::WalErrorKind::WalFailed);
}

TEST_CASE("ENOSPC rejects the batch, leaves no partial record, and appends succeed once space returns",
          "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  std::filesystem::create_directories(wal_dir);
  LockedFaultFs fault(wal_dir);
  const std::string cfg = config(wal_dir, 1, "preallocate = false");
  {
    Running group = start(with(fault.fs()), cfg);
    for (std::uint64_t i = 1; i <= 3; ++i) REQUIRE(group.append(0, i));
    fault.with([](lw::FaultFileSystem& f) { f.limit_space(50); });  // less than one record
    auto full = group.append(0, 4);
    REQUIRE_FALSE(full);
    CHECK(full.error().kind == pw::WalErrorKind::NoSpace);
    auto other = group.append(1, 1);
    REQUIRE_FALSE(other);
    CHECK(other.error().kind == pw::WalErrorKind::NoSpace);
    CHECK_FALSE(group.proxy.request(pw::GetStats{0}).failed);

    fault.with([](lw::FaultFileSystem& f) { f.limit_space(std::nullopt); });
    auto back = group.append(0, 4);  // index 4 again: the rejected one left nothing behind
    REQUIRE(back);
    CHECK(back->index == 4);
    REQUIRE(group.append(1, 1));
  }
  fault.with([](lw::FaultFileSystem& f) { f.power_loss(); });
  lw::PosixFileSystem posix;
  lw::RecoveryOptions options;
  options.dir = wal_dir;
  options.repair = false;
  auto recovered = lw::recover(posix, options);
  REQUIRE(recovered);
  CHECK(recovered->repairs.empty());  // no partial record anywhere
  Running group = start({}, cfg);
  check_entries(group.read(0), 1, 4);
  check_entries(group.read(1), 1, 1);
}

TEST_CASE("ENOSPC preallocating a new segment rejects the batch and leaves the WAL working", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  std::filesystem::create_directories(wal_dir);
  LockedFaultFs fault(wal_dir);
  Running group = start(with(fault.fs()), config(wal_dir, 1, "segment_bytes = \"64KiB\""));
  std::uint64_t index = 1;
  for (; index <= 10; ++index) REQUIRE(group.append(0, index, 1, 4000));  // 40 KB of the first 64 KiB
  fault.with([](lw::FaultFileSystem& f) { f.limit_space(1000); });        // no room for a new segment
  pw::AppendBatch rotate{0, {}};
  for (std::uint64_t i = index; i < index + 8; ++i) rotate.entries.push_back({1, i, payload_of(0, i, 4000)});
  auto refused = group.proxy.request(pw::AppendBatch{rotate});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == pw::WalErrorKind::NoSpace);
  CHECK_FALSE(group.proxy.request(pw::GetStats{0}).failed);
  fault.with([](lw::FaultFileSystem& f) { f.limit_space(std::nullopt); });
  auto later = group.proxy.request(std::move(rotate));
  REQUIRE(later);
  CHECK(later->index == index + 7);
  check_entries(group.read(0), 1, index + 7, 4000);
}

TEST_CASE("terminating writes, syncs and answers every waiter, and later appends get ShuttingDown", "[wal_actors]") {
  TempDir dir;
  auto hook = std::make_shared<HookFs>(std::make_shared<lw::PosixFileSystem>());
  {
    Running group = start(with(hook), config(dir.file("wal")));
    group.read(0);
    hook->sync_gate.close();
    for (std::uint64_t p = 0; p < 8; ++p) group.run(Run{p, 1, 1});
    REQUIRE(hook->sync_gate.wait_held());
    wait_pending(group, 0, 8);
    group.proxy.send(elfin::Terminate{});
    auto late = group.append(100, 1);
    REQUIRE_FALSE(late);
    CHECK(late.error().kind == pw::WalErrorKind::ShuttingDown);
    hook->sync_gate.open();
    REQUIRE(all_done(8));
    CHECK(sink().acks().size() == 8);
    CHECK(sink().refusals().empty());
  }
  Running group = start({}, config(dir.file("wal")));
  for (std::uint64_t p = 0; p < 8; ++p) check_entries(group.read(p), 1, 1);
  CHECK(group.read(100).entries.empty());
}

TEST_CASE("a WAL directory written with another wal_count is refused at start", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  {
    Running group = start({}, config(wal_dir, 2));
    REQUIRE(group.append(0, 1));
    REQUIRE(group.append(1, 1));
  }
  for (std::uint32_t count : {1u, 3u}) {
    INFO("wal_count = " << count);
    Running group = start({}, config(wal_dir, count));
    auto refused = group.append(0, 2);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == pw::WalErrorKind::StartFailed);
    CHECK_THAT(refused.error().detail, Catch::Contains("wal_count"));
  }
  Running group = start({}, config(wal_dir, 2));
  check_entries(group.read(1), 1, 1);
}

TEST_CASE("a read error during recovery fails the start and changes no file", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  {
    Running group = start({}, config(wal_dir));
    for (std::uint64_t i = 1; i <= 5; ++i) REQUIRE(group.append(0, i));
  }
  std::map<std::string, std::uintmax_t> before;
  for (const auto& e : std::filesystem::directory_iterator(wal_dir)) before[e.path().string()] = e.file_size();
  {
    LockedFaultFs fault(wal_dir);
    fault.with([](lw::FaultFileSystem& f) { f.fail_reads(lw::Errno{EIO}); });
    Running group = start(with(fault.fs()), config(wal_dir, 1, kSmallSegments));
    auto refused = group.append(0, 6);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == pw::WalErrorKind::StartFailed);
    CHECK_THAT(refused.error().detail, Catch::Contains("read"));
  }
  std::map<std::string, std::uintmax_t> after;
  for (const auto& e : std::filesystem::directory_iterator(wal_dir)) after[e.path().string()] = e.file_size();
  CHECK(after == before);
  Running group = start({}, config(wal_dir));
  check_entries(group.read(0), 1, 5);
}

TEST_CASE("requests wait for recovery: they see the recovered log", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  {
    Running group = start({}, config(wal_dir));
    for (std::uint64_t i = 1; i <= 5; ++i) REQUIRE(group.append(0, i));
  }
  auto hook = std::make_shared<HookFs>(std::make_shared<lw::PosixFileSystem>());
  hook->list_gate.close();
  Running group = start(with(hook), config(wal_dir));
  REQUIRE(hook->list_gate.wait_held());  // recovery is under way, held
  group.run(Run{0, 8, 1});               // index 8: past the recovered log, which ends at 5
  group.proxy.sync();
  CHECK(sink().refusals().empty());
  CHECK(sink().acks().empty());
  hook->list_gate.open();
  REQUIRE(all_done(1));
  const auto refusals = sink().refusals();
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0].kind == pw::WalErrorKind::OutOfOrder);
  check_entries(group.read(0), 1, 5);
}

TEST_CASE("truncation is durable and stale entries never come back", "[wal_actors]") {
  TempDir dir;
  const std::string cfg = config(dir.file("wal"));
  {
    Running group = start({}, cfg);
    for (std::uint64_t i = 1; i <= 10; ++i) REQUIRE(group.append(0, i));
    auto truncated = group.proxy.request(pw::TruncateAfter{0, 5});
    REQUIRE(truncated);
    CHECK(truncated->index == 5);
  }
  {
    Running group = start({}, cfg);
    const pw::Range range = group.read(0);
    check_entries(range, 1, 5);
    CHECK(range.last_index == 5);
    auto gap = group.append(0, 7);
    REQUIRE_FALSE(gap);
    CHECK(gap.error().expected_index == 6);
    for (std::uint64_t i = 6; i <= 8; ++i) REQUIRE(group.append(0, i, 2));
  }
  {
    Running group = start({}, cfg);
    const pw::Range range = group.read(0);
    check_entries(range, 1, 8);
    for (const auto& e : range.entries) CHECK(e.term == (e.index <= 5 ? 1u : 2u));
    // An index seen again replaces it and everything after it (a Raft conflict without a
    // separate truncation).
    REQUIRE(group.append(0, 3, 3));
  }
  Running group = start({}, cfg);
  const pw::Range range = group.read(0);
  check_entries(range, 1, 3);
  CHECK(range.entries.back().term == 3);
}

TEST_CASE("a checkpoint lets segments go and reads start after it", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  const std::string cfg = config(wal_dir, 1, "segment_bytes = \"64KiB\"");
  Running group = start({}, cfg);
  auto append_batch = [&](std::uint64_t p, std::uint64_t first, std::uint64_t n) {
    pw::AppendBatch batch{p, {}};
    for (std::uint64_t i = first; i < first + n; ++i) batch.entries.push_back({1, i, payload_of(p, i, 4000)});
    REQUIRE(group.proxy.request(std::move(batch)));
  };
  for (std::uint64_t i = 1; i <= 60; i += 4) {
    append_batch(0, i, 4);
    append_batch(1, i, 4);
  }
  const auto segments = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(wal_dir)) n += e.path().extension() == ".wal";
    return n;
  };
  const std::size_t before = segments();
  REQUIRE(before >= 4);
  auto only_one = group.proxy.request(pw::Checkpoint{0, 40});
  REQUIRE(only_one);
  CHECK(only_one->segments_retired == 0);  // partition 1 still needs them
  auto both = group.proxy.request(pw::Checkpoint{1, 40});
  REQUIRE(both);
  CHECK(both->segments_retired > 0);
  CHECK(segments() == before - both->segments_retired);
  const pw::Range range = group.read(0);
  CHECK(range.first_index == 41);
  check_entries(range, 41, 60, 4000);
}

TEST_CASE("a checkpoint survives a restart: reads still start after it and it still lets segments go", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  const std::string cfg = config(wal_dir, 1, "segment_bytes = \"64KiB\"");
  {
    Running group = start({}, cfg);
    for (std::uint64_t i = 1; i <= 60; i += 4) {
      for (std::uint64_t p : {0, 1}) {
        pw::AppendBatch batch{p, {}};
        for (std::uint64_t j = i; j < i + 4; ++j) batch.entries.push_back({1, j, payload_of(p, j, 4000)});
        REQUIRE(group.proxy.request(std::move(batch)));
      }
    }
    auto only_one = group.proxy.request(pw::Checkpoint{0, 40});
    REQUIRE(only_one);
    REQUIRE(only_one->segments_retired == 0);  // partition 1 still needs them
  }
  const auto segments = [&] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(wal_dir)) n += e.path().extension() == ".wal";
    return n;
  };
  const std::size_t before = segments();
  Running group = start({}, cfg);
  const pw::Range range = group.read(0);
  CHECK(range.first_index == 41);
  check_entries(range, 41, 60, 4000);
  // Partition 0's checkpoint from before the restart still counts: partition 1's lets them go.
  auto second = group.proxy.request(pw::Checkpoint{1, 40});
  REQUIRE(second);
  CHECK(second->segments_retired > 0);
  CHECK(segments() == before - second->segments_retired);
  check_entries(group.read(1), 41, 60, 4000);
}

TEST_CASE("a refused append fails only its own partition", "[wal_actors]") {
  TempDir dir;
  Running group = start({}, config(dir.file("wal"), 1, "max_payload_bytes = 1000"));
  REQUIRE(group.append(0, 1));
  auto gap = group.append(0, 3);
  REQUIRE_FALSE(gap);
  CHECK(gap.error().kind == pw::WalErrorKind::OutOfOrder);
  CHECK(gap.error().expected_index == 2);
  auto big = group.append(1, 1, 1, 2000);
  REQUIRE_FALSE(big);
  CHECK(big.error().kind == pw::WalErrorKind::TooLarge);
  pw::AppendBatch holes{2, {{1, 1, {}}, {1, 3, {}}}};
  auto batch = group.proxy.request(std::move(holes));
  REQUIRE_FALSE(batch);
  CHECK(batch.error().kind == pw::WalErrorKind::OutOfOrder);
  REQUIRE(group.append(0, 2));
  REQUIRE(group.append(1, 1));
  check_entries(group.read(0), 1, 2);
}

TEST_CASE("partition p is served by WAL p % wal_count", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  Running group = start({}, config(wal_dir, 3));
  for (std::uint64_t p = 0; p < 7; ++p) {
    REQUIRE(group.append(p, 1));
    CHECK(group.proxy.request(pw::GetStats{p}).wal_id == p % 3);
  }
  CHECK(group.proxy.request(pw::GetStats{0}).appends == 3);  // partitions 0, 3, 6
  std::set<std::uint32_t> wal_ids;
  for (const auto& e : std::filesystem::directory_iterator(wal_dir)) {
    if (auto name = lw::parse_segment_file_name(e.path().filename().string())) wal_ids.insert(name->wal_id);
  }
  CHECK(wal_ids == std::set<std::uint32_t>{0, 1, 2});
}

TEST_CASE("Flush answers once everything the WAL received before it is durable", "[wal_actors]") {
  TempDir dir;
  Running group = start({}, config(dir.file("wal"), 1, "linger = \"1s\""));
  group.read(0);
  group.run(Run{0, 1, 1});
  wait_pending(group, 0, 1);
  auto flushed = group.proxy.request(pw::Flush{0});
  REQUIRE(flushed);
  CHECK(flushed->appends == 1);
  CHECK(flushed->pending == 0);
}

TEST_CASE("config errors name the key", "[wal_actors]") {
  aw::Config config;
  auto errors = aw::validate(config);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::StartsWith("dir:"));
  config.dir = "/tmp/x";
  config.wal_count = 0;
  config.max_batch_entries = 0;
  errors = aw::validate(config);
  REQUIRE(errors.size() == 2);
  CHECK_THAT(errors[0], Catch::StartsWith("wal_count:"));
  CHECK_THAT(errors[1], Catch::StartsWith("max_batch_entries:"));
  aw::Config before;
  before.dir = "/tmp/x";
  aw::Config after = before;
  after.wal_count = 8;
  errors = aw::validate_change(before, after);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::StartsWith("wal_count: cannot change"));
}

TEST_CASE("a saved hard state survives a power loss and the latest one reads back", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  std::filesystem::create_directories(wal_dir);
  LockedFaultFs fault(wal_dir);
  {
    Running group = start(with(fault.fs()), config(wal_dir, 1, kSmallSegments));
    CHECK(group.read(3).hard_state == pw::HardState{});  // none saved yet
    REQUIRE(group.append(3, 1, 1));
    auto first = group.proxy.request(pw::SaveHardState{3, {1, 2, 0}});
    REQUIRE(first);
    CHECK(first->index == 1);  // the partition's log end, durable with it
    REQUIRE(group.append(3, 2, 2));
    auto second = group.proxy.request(pw::SaveHardState{3, {2, 3, 2}});
    REQUIRE(second);
    CHECK(second->index == 2);
    CHECK(second->term == 2);
    REQUIRE(group.proxy.request(pw::SaveHardState{4, {7, 0, 0}}));  // another partition, no entries
  }
  fault.with([](lw::FaultFileSystem& f) { f.power_loss(); });
  Running group = start({}, config(wal_dir));
  const pw::Range range = group.read(3);
  CHECK(range.hard_state == pw::HardState{2, 3, 2});
  check_entries(range, 1, 2);  // hard-state records are not entries
  CHECK(group.read(4).hard_state == pw::HardState{7, 0, 0});
  CHECK(group.read(4).entries.empty());
}

TEST_CASE("a hard state is answered only after the entries requested before it are durable", "[wal_actors]") {
  TempDir dir;
  Running group = start({}, config(dir.file("wal")));
  REQUIRE(group.append(0, 1));
  // A batch and a hard state pipelined: both answered, the hard state's answer covering the batch.
  pw::AppendBatch batch{0, {}};
  for (std::uint64_t i = 2; i <= 5; ++i) batch.entries.push_back({2, i, payload_of(0, i, 32)});
  REQUIRE(group.proxy.request(std::move(batch)));
  auto saved = group.proxy.request(pw::SaveHardState{0, {2, 1, 5}});
  REQUIRE(saved);
  CHECK(saved->index == 5);
  CHECK(saved->term == 2);
}

TEST_CASE("checkpoints that delete old segments keep every partition's latest hard state", "[wal_actors]") {
  TempDir dir;
  const std::string wal_dir = dir.file("wal");
  const std::string cfg = config(wal_dir, 1, "segment_bytes = \"64KiB\"");
  {
    Running group = start({}, cfg);
    REQUIRE(group.proxy.request(pw::SaveHardState{0, {5, 2, 0}}));  // in the first segment
    for (std::uint64_t i = 1; i <= 60; i += 4) {
      pw::AppendBatch batch{0, {}};
      for (std::uint64_t j = i; j < i + 4; ++j) batch.entries.push_back({5, j, payload_of(0, j, 4000)});
      REQUIRE(group.proxy.request(std::move(batch)));
    }
    auto checkpointed = group.proxy.request(pw::Checkpoint{0, 60});
    REQUIRE(checkpointed);
    REQUIRE(checkpointed->segments_retired > 0);  // the first segment, with the hard state, is gone
    CHECK(group.read(0).hard_state == pw::HardState{5, 2, 0});
  }
  Running group = start({}, cfg);
  CHECK(group.read(0).hard_state == pw::HardState{5, 2, 0});
}
