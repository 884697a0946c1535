// Crash tests through the fault layer's power-loss model (a model: a real power cut cannot be run
// in a test). Everything a commit acknowledged must be recovered; nothing else may be invented.
#include <catch2/catch.hpp>

#include <filesystem>

#include <elfin/wal/fault_file_system.hpp>

#include "wal_test_support.hpp"

using namespace elfin::wal;
using namespace elfin::wal::test;
using elfin::test::TempDir;

namespace {

WriterOptions small_segments() {
  WriterOptions options;
  options.segment_bytes = 512;
  return options;
}

void copy_dir(const std::string& from, const std::string& to) {
  std::filesystem::remove_all(to);
  std::filesystem::copy(from, to);
}

}  // namespace

TEST_CASE("a crash at every step of a rotation recovers every acknowledged record", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto base = tmp.file("base");
  std::uint64_t acknowledged = 0;
  {
    auto [recovery, writer] = open_wal(posix, base, small_segments());
    // Fill the first segment to just below its limit: the next record rotates.
    std::uint64_t i = 1;
    while (writer.log().segments.back().end_offset + 80 <= 512) write_all(writer, {{0, i++}});
    acknowledged = i - 1;
    REQUIRE(writer.log().segments.size() == 1);
  }
  const auto payload = bytes_of(payload_text(0, acknowledged + 1));
  REQUIRE(record_bytes(payload.size()) <= 80);

  std::uint64_t steps = 0;
  for (std::uint64_t crash_at = 0;; ++crash_at) {
    INFO("crash after " << crash_at << " mutating calls");
    const auto dir = tmp.file("crash");
    copy_dir(base, dir);
    FaultFileSystem fs(posix, dir);
    bool acked = false;
    {
      auto [recovery, writer] = open_wal(fs, dir, small_segments());
      fs.crash_after(fs.mutating_calls() + crash_at);
      REQUIRE(writer.append(Record{1, 0, 1, acknowledged + 1, payload}));
      auto committed = writer.commit();
      acked = committed.ok();
      if (acked) REQUIRE(committed->rotated);
    }
    const bool crashed = fs.crashed();
    fs.power_loss();

    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    const auto log = indexes(*recovered, 0);
    // Acknowledged: all there. Not acknowledged: the crash came before its fdatasync, so absent.
    REQUIRE(log.size() == acknowledged + (acked ? 1 : 0));
    for (std::size_t k = 0; k < log.size(); ++k) REQUIRE(log[k].first == k + 1);
    // No temporary file survives recovery; an acknowledged record's segment kept its name.
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      REQUIRE(entry.path().extension() != ".tmp");
    }
    if (acked) REQUIRE(recovered->log.segments.size() == 2);

    // And the log goes on from there.
    {
      auto writer = Writer::open(fs, recovered->log, small_segments());
      REQUIRE(writer);
      write_all(*writer, {{0, log.size() + 1}});
    }
    auto again = recover(fs, recovery_options(dir));
    REQUIRE(again);
    REQUIRE(indexes(*again, 0).size() == log.size() + 1);
    if (!crashed) break;
    ++steps;
  }
  // create, allocate, header write, sync, rename, directory fsync, record write, record sync
  CHECK(steps == 8);
}

TEST_CASE("after a power loss only synced data survives and everything acknowledged is there", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);

  std::map<std::uint64_t, std::uint64_t> acked;  // partition -> last acknowledged index
  std::uint64_t next_index = 1;
  for (int round = 0; round < 12; ++round) {
    INFO("round " << round);
    {
      auto [recovery, writer] = open_wal(fs, dir, small_segments());
      for (const auto& [partition, last] : acked) {
        const auto got = indexes(recovery, partition);
        REQUIRE(got.size() == last);
        REQUIRE(got.back().first == last);
      }
      // A few acknowledged batches of three partitions.
      for (int batch = 0; batch < 3; ++batch) {
        std::vector<Spec> specs;
        specs.reserve(3);
        for (std::uint64_t p = 0; p < 3; ++p) specs.push_back({p, next_index, 1});
        write_all(writer, specs, specs.size());
        for (std::uint64_t p = 0; p < 3; ++p) acked[p] = next_index;
        ++next_index;
      }
      // Then a batch whose commit is cut off by the power loss before or after its write.
      const int cut_after = round % 3;  // 0: nothing; 1: the write reached the page cache; 2: ...
      fs.crash_after(fs.mutating_calls() + static_cast<std::uint64_t>(cut_after));
      std::vector<std::vector<std::byte>> payloads;
      payloads.reserve(3);
      for (std::uint64_t p = 0; p < 3; ++p) payloads.push_back(bytes_of(payload_text(p, next_index)));
      for (std::uint64_t p = 0; p < 3; ++p) REQUIRE(writer.append(Record{1, p, 1, next_index, payloads[p]}));
      const auto before = writer.log().segments.back().end_offset;
      const auto path = writer.log().segments.back().path;
      auto committed = writer.commit();
      bool unsynced_in_file = false;
      if (committed) {
        for (std::uint64_t p = 0; p < 3; ++p) acked[p] = next_index;
        ++next_index;
      } else if (committed.error().op == IoOp::Sync && committed.error().path == path) {
        // The unsynced batch reached the file (the page cache) ...
        const auto image = read_all(path);
        REQUIRE(image.size() > before);
        REQUIRE(image.substr(before, 8) != std::string(8, '\0'));
        unsynced_in_file = true;
      }
      if (unsynced_in_file) {
        fs.power_loss();  // ... and is gone after the power loss
        const auto image = read_all(path);
        REQUIRE((image.size() <= before || image.substr(before, 8) == std::string(8, '\0')));
        continue;
      }
    }
    fs.power_loss();
  }
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  for (std::uint64_t p = 0; p < 3; ++p) {
    const auto got = indexes(*recovered, p);
    REQUIRE(got.size() == acked[p]);
  }
}

TEST_CASE("a power loss that tears the unsynced batch at any byte keeps every acknowledged record and no partial one",
          "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const std::vector<Spec> acknowledged = interleaved(2, 3);
  const std::vector<Spec> unsynced{{0, 4}, {1, 4}, {0, 5}};
  std::uint64_t batch_bytes = 0;
  for (const auto& s : unsynced) batch_bytes += record_bytes(payload_text(s.partition, s.index).size());

  for (std::uint64_t torn = 0; torn <= batch_bytes + 8; torn += 3) {
    INFO("torn after " << torn << " of " << batch_bytes << " unsynced bytes");
    const auto dir = tmp.file("torn-" + std::to_string(torn));
    REQUIRE(posix.create_dirs(dir));
    FaultFileSystem fs(posix, dir);
    std::vector<std::uint64_t> ends;       // where each unsynced record ends, from the batch's start
    std::vector<std::uint64_t> data_ends;  // ... without its zero padding (zeros are there already)
    {
      auto [recovery, writer] = open_wal(fs, dir);
      write_all(writer, acknowledged, 2);
      std::uint64_t end = 0;
      for (const auto& s : unsynced) {
        const auto payload = bytes_of(payload_text(s.partition, s.index));
        REQUIRE(writer.append(Record{1, s.partition, 1, s.index, payload}));
        data_ends.push_back(end + kRecordHeaderBytes + payload.size());
        end += record_bytes(payload.size());
        ends.push_back(end);
      }
      fs.crash_after(fs.mutating_calls() + 1);  // the write reaches the page cache, the sync does not
      auto committed = writer.commit();
      REQUIRE_FALSE(committed);
      REQUIRE(committed.error().kind == ErrorKind::SyncFailed);
    }
    fs.power_loss(torn);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    std::size_t whole = 0;
    while (whole < ends.size() && data_ends[whole] <= torn) ++whole;
    // Never acknowledged, so they may be there, but only whole: exactly those that fully reached the disk.
    REQUIRE(recovered->records_read == acknowledged.size() + whole);
    REQUIRE(indexes(*recovered, 0).size() == 3 + (whole >= 1 ? 1 : 0) + (whole >= 3 ? 1 : 0));
    REQUIRE(indexes(*recovered, 1).size() == 3 + (whole >= 2 ? 1 : 0));
    // A torn record was cut (with a copy kept); a tear before any byte of the next record needs no repair.
    const std::uint64_t next_starts = whole == 0 ? 0 : ends[whole - 1];
    REQUIRE(recovered->repairs.empty() == (whole == ends.size() || torn <= next_starts));
  }
}

TEST_CASE("a crash at every step of a retirement leaves a log without a hole", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto base = tmp.file("base");
  std::uint64_t checkpoint = 0;
  std::size_t segments = 0;
  {
    auto [recovery, writer] = open_wal(posix, base, small_segments());
    write_all(writer, one_partition(40), 2);
    segments = writer.log().segments.size();
    REQUIRE(segments >= 4);
    checkpoint = writer.log().segments[segments - 2].partitions.at(0).last;  // all but the newest
  }
  for (std::uint64_t crash_at = 0;; ++crash_at) {
    INFO("crash after " << crash_at << " mutating calls");
    const auto dir = tmp.file("crash");
    copy_dir(base, dir);
    FaultFileSystem fs(posix, dir);
    {
      auto [recovery, writer] = open_wal(fs, dir, small_segments());
      fs.crash_after(fs.mutating_calls() + crash_at);
      std::ignore = writer.retire({{0, checkpoint}});
    }
    const bool crashed = fs.crashed();
    fs.power_loss();
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    // A prefix of the segments is gone; everything after the checkpoint is there, without a gap.
    const auto log = indexes(*recovered, 0);
    REQUIRE_FALSE(log.empty());
    REQUIRE(log.back().first == 40);
    REQUIRE(log.front().first <= checkpoint + 1);
    for (std::size_t k = 1; k < log.size(); ++k) REQUIRE(log[k].first == log[k - 1].first + 1);
    if (!crashed) {
      REQUIRE(recovered->log.segments.size() == 1);
      REQUIRE(log.front().first == checkpoint + 1);
      break;
    }
  }
}
