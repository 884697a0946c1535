// The writer: round trips through recovery, rotation, preallocation, retirement, and the failure
// rules (fsync error -> failed writer; ENOSPC / write error -> batch rejected, nothing partial).
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>

#include <elfin/wal/fault_file_system.hpp>
#include <elfin/wal/segment_scan.hpp>

#include "wal_test_support.hpp"

using namespace elfin::wal;
using namespace elfin::wal::test;
using elfin::test::TempDir;

namespace {
std::vector<std::pair<std::uint64_t, std::uint64_t>> expected_indexes(std::uint64_t first, std::uint64_t last,
                                                                      std::uint64_t term = 1) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::uint64_t i = first; i <= last; ++i) out.emplace_back(i, term);
  return out;
}
}  // namespace

TEST_CASE("records written and committed are recovered per partition, in order", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  {
    auto [recovery, writer] = open_wal(fs, dir);
    CHECK(recovery.partitions.empty());
    write_all(writer, interleaved(3, 20), 7);
    CHECK(writer.log().next_sequence == 60);
  }
  auto [recovery, writer] = open_wal(fs, dir);
  CHECK(recovery.repairs.empty());
  CHECK(recovery.records_read == 60);
  for (std::uint64_t p = 0; p < 3; ++p) CHECK(indexes(recovery, p) == expected_indexes(1, 20));
  // Sequences number the records of the WAL in the order they were written.
  CHECK(recovery.partitions[1][0].sequence == 1);
  CHECK(recovery.partitions[2][19].sequence == 59);

  SECTION("and a reopened writer continues the log after them") {
    write_all(writer, {{0, 21}, {1, 21}});
    auto again = recover(fs, recovery_options(dir));
    REQUIRE(again);
    CHECK(indexes(*again, 0) == expected_indexes(1, 21));
    CHECK(indexes(*again, 1) == expected_indexes(1, 21));
    CHECK(indexes(*again, 2) == expected_indexes(1, 20));
  }
}

TEST_CASE("commit reports what became durable, and an empty commit does nothing", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  auto [recovery, writer] = open_wal(fs, tmp.file("wal"));
  auto empty = writer.commit();
  REQUIRE(empty);
  CHECK(empty->first_sequence == empty->end_sequence);
  const auto payload = bytes_of("hello");
  CHECK(writer.append(Record{1, 4, 1, 1, payload}).value() == 0);
  CHECK(writer.append(Record{1, 4, 1, 2, payload}).value() == 1);
  CHECK(writer.pending_records() == 2);
  auto durable = writer.commit();
  REQUIRE(durable);
  CHECK(durable->first_sequence == 0);
  CHECK(durable->end_sequence == 2);
  CHECK(durable->bytes == 2 * record_bytes(payload.size()));
  CHECK(writer.pending_records() == 0);
}

TEST_CASE("append refuses a payload over the maximum and the reserved type 0", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  WriterOptions options;
  options.max_payload_bytes = 16;
  auto [recovery, writer] = open_wal(fs, tmp.file("wal"), options);
  const auto big = std::vector<std::byte>(17);
  auto too_large = writer.append(Record{1, 9, 1, 1, big});
  REQUIRE_FALSE(too_large);
  CHECK(too_large.error().kind == ErrorKind::RecordTooLarge);
  CHECK(too_large.error().partition == 9u);
  auto zero = writer.append(Record{0, 9, 1, 1, {}});
  REQUIRE_FALSE(zero);
  CHECK(zero.error().kind == ErrorKind::InvalidRecord);
  CHECK(writer.pending_records() == 0);
}

TEST_CASE("segments rotate at segment_bytes, are preallocated, and a batch never spans two", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 1024;
  {
    auto [recovery, writer] = open_wal(fs, dir, options);
    // The new segment is preallocated to segment_bytes before any record goes in.
    CHECK(std::filesystem::file_size(segment_path(dir, 0)) == 1024);
    write_all(writer, interleaved(2, 39), 3);
    REQUIRE(writer.log().segments.size() > 3);
    for (const auto& segment : writer.log().segments) CHECK(segment.end_offset <= 1024);
  }
  // Every segment's first sequence continues the one before, and every batch (3 records) is whole.
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  CHECK(indexes(*recovered, 0) == expected_indexes(1, 39));
  CHECK(indexes(*recovered, 1) == expected_indexes(1, 39));
  for (const auto& segment : recovered->log.segments) CHECK(segment.records % 3 == 0);
  // No temporary file is left by rotations that completed.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CHECK(entry.path().extension() == ".wal");
  }
}

TEST_CASE("a batch larger than segment_bytes goes whole into one segment", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 256;
  auto [recovery, writer] = open_wal(fs, dir, options);
  write_all(writer, one_partition(10), 10);
  CHECK(writer.log().segments.size() == 1);
  CHECK(writer.log().segments.back().records == 10);
  write_all(writer, {{0, 11}});
  CHECK(writer.log().segments.size() == 2);
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  CHECK(indexes(*recovered, 0) == expected_indexes(1, 11));
}

TEST_CASE("retire deletes the oldest segments every partition has checkpointed past", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 512;
  auto [recovery, writer] = open_wal(fs, dir, options);
  write_all(writer, interleaved(2, 30), 2);
  const auto segments = writer.log().segments;
  REQUIRE(segments.size() >= 4);
  const auto& second = segments[1];
  const std::uint64_t p0_last = second.partitions.at(0).last;
  const std::uint64_t p1_last = second.partitions.at(1).last;

  SECTION("a partition not checkpointed far enough keeps its segments") {
    auto removed = writer.retire({{0, p0_last}, {1, p1_last - 1}});
    REQUIRE(removed);
    CHECK(removed->size() == 1);  // only the first segment
    CHECK_FALSE(std::filesystem::exists(segments[0].path));
    CHECK(std::filesystem::exists(second.path));
  }
  SECTION("a partition missing from the checkpoints keeps its segments") {
    auto removed = writer.retire({{0, 1000}});
    REQUIRE(removed);
    CHECK(removed->empty());
  }
  SECTION("both partitions past the second segment: the first two go, recovery starts after them") {
    auto removed = writer.retire({{0, p0_last}, {1, p1_last}});
    REQUIRE(removed);
    CHECK(*removed == std::vector<std::uint64_t>{segments[0].segment_no, segments[1].segment_no});
    write_all(writer, {{0, 31}});
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(recovered->log.segments.front().segment_no == segments[2].segment_no);
    const auto p0 = indexes(*recovered, 0);
    REQUIRE_FALSE(p0.empty());
    CHECK(p0.front().first == p0_last + 1);
    CHECK(p0.back().first == 31);
  }
  SECTION("the newest segment is never retired") {
    auto removed = writer.retire({{0, 1000}, {1, 1000}});
    REQUIRE(removed);
    CHECK(removed->size() == segments.size() - 1);
    CHECK(writer.log().segments.size() == 1);
    write_all(writer, {{0, 31}});
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(recovered->ranges.at(0).last == 31);
  }
}

TEST_CASE("an fsync error fails the batch and puts the writer in a failed state", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);
  auto [recovery, writer] = open_wal(fs, dir);
  write_all(writer, one_partition(3));
  fs.fail_syncs(Errno{EIO});
  const auto payload = bytes_of("x");
  REQUIRE(writer.append(Record{1, 0, 1, 4, payload}));
  auto failed = writer.commit();
  REQUIRE_FALSE(failed);
  CHECK(failed.error().kind == ErrorKind::SyncFailed);
  CHECK(failed.error().sys_errno == EIO);
  CHECK(writer.failed());

  // The fsync would succeed now, but the writer does not retry and acknowledge: it stays failed.
  fs.fail_syncs(std::nullopt);
  const std::uint64_t syncs = fs.syncs();
  auto later = writer.append(Record{1, 0, 1, 4, payload});
  REQUIRE_FALSE(later);
  CHECK(later.error().kind == ErrorKind::WriterFailed);
  CHECK(later.error().cause == ErrorKind::SyncFailed);
  auto commit = writer.commit();
  REQUIRE_FALSE(commit);
  CHECK(commit.error().kind == ErrorKind::WriterFailed);
  CHECK(fs.syncs() == syncs);
  CHECK(to_string(commit.error()).find("writer failed") != std::string::npos);
}

TEST_CASE("ENOSPC rejects the batch, leaves no partial record, and appends succeed once space returns", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);
  WriterOptions options;
  options.preallocate = false;  // so the records' writes are what runs out of space
  auto [recovery, writer] = open_wal(fs, dir, options);
  write_all(writer, one_partition(4));
  const auto size_before = std::filesystem::file_size(segment_path(dir, 0));

  fs.limit_space(100);  // the batch below needs more: its write is cut short, then ENOSPC
  const auto payload = bytes_of(std::string(60, 'z'));
  REQUIRE(writer.append(Record{1, 0, 1, 5, payload}));
  REQUIRE(writer.append(Record{1, 0, 1, 6, payload}));
  auto rejected = writer.commit();
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().kind == ErrorKind::NoSpace);
  CHECK(rejected.error().sys_errno == ENOSPC);
  CHECK(rejected.error().offset == size_before);
  CHECK_FALSE(writer.failed());
  CHECK(writer.pending_records() == 0);
  // The part that was written is gone again, and that is durable.
  CHECK(std::filesystem::file_size(segment_path(dir, 0)) == size_before);

  SECTION("recovery then sees the acknowledged records and nothing partial") {
    fs.power_loss();
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(recovered->repairs.empty());
    CHECK(indexes(*recovered, 0) == expected_indexes(1, 4));
  }
  SECTION("the next batch succeeds once space returns") {
    fs.limit_space(std::nullopt);
    write_all(writer, {{0, 5}, {0, 6}}, 2);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(recovered->repairs.empty());
    CHECK(indexes(*recovered, 0) == expected_indexes(1, 6));
  }
}

TEST_CASE("ENOSPC preallocating a new segment rejects the batch before any record goes in", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);
  WriterOptions options;
  options.segment_bytes = 512;
  auto [recovery, writer] = open_wal(fs, dir, options);
  write_all(writer, one_partition(4));
  REQUIRE(writer.log().segments.size() == 1);
  fs.limit_space(100);
  const auto payload = bytes_of(std::string(200, 'q'));
  REQUIRE(writer.append(Record{1, 0, 1, 5, payload}));
  REQUIRE(writer.append(Record{1, 0, 1, 6, payload}));
  auto rejected = writer.commit();
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().kind == ErrorKind::NoSpace);
  CHECK(rejected.error().op == IoOp::Allocate);
  CHECK(writer.log().segments.size() == 1);
  CHECK_FALSE(std::filesystem::exists(segment_path(dir, 1)));
  CHECK_FALSE(std::filesystem::exists(segment_path(dir, 1) + ".tmp"));

  fs.limit_space(std::nullopt);
  write_all(writer, {{0, 5}, {0, 6}}, 2);
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  CHECK(indexes(*recovered, 0) == expected_indexes(1, 6));
}

TEST_CASE("a write error (EIO) rejects the batch like ENOSPC and the writer goes on", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);
  auto [recovery, writer] = open_wal(fs, dir);
  write_all(writer, one_partition(2));
  fs.fail_writes(Errno{EIO});
  const auto payload = bytes_of("y");
  REQUIRE(writer.append(Record{1, 0, 1, 3, payload}));
  auto rejected = writer.commit();
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().kind == ErrorKind::WriteFailed);
  CHECK(rejected.error().op == IoOp::Write);
  CHECK_FALSE(writer.failed());
  fs.fail_writes(std::nullopt);
  write_all(writer, {{0, 3}});
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  CHECK(indexes(*recovered, 0) == expected_indexes(1, 3));
}

TEST_CASE("errors format with their kind, file, offset, partition and errno", "[wal]") {
  Error e;
  e.kind = ErrorKind::CorruptRecord;
  e.path = "/x/00000000-0000000000000003.wal";
  e.offset = 4096;
  e.partition = 17;
  e.what = "CRC mismatch";
  CHECK(fmt::format("{}", e) ==
        "corrupt record: CRC mismatch in /x/00000000-0000000000000003.wal at byte 4096, partition 17");
  const Error io = io_error(ErrorKind::WriteFailed, IoOp::Write, Errno{ENOSPC}, "/x/f", 8);
  CHECK(io.kind == ErrorKind::NoSpace);
  CHECK(to_string(io) == "no space in /x/f at byte 8: write: No space left on device");
}

TEST_CASE("one fdatasync per commit, however many records the batch holds", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  REQUIRE(posix.create_dirs(dir));
  FaultFileSystem fs(posix, dir);
  auto [recovery, writer] = open_wal(fs, dir);
  const std::uint64_t before = fs.syncs();
  write_all(writer, interleaved(5, 10), 5);  // 50 records, 10 batches, no rotation
  CHECK(writer.log().segments.size() == 1);
  CHECK(fs.syncs() - before == 10);
}

TEST_CASE("WALs sharing a directory recover only their own segments", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  for (std::uint32_t id : {0u, 1u}) {
    auto writer = open_shared_wal(fs, dir, id, 2);
    // Partition p lives on WAL p % 2.
    write_all(writer, {{id, 1}, {id + 2, 1}, {id, 2}});
  }
  for (std::uint32_t id : {0u, 1u}) {
    auto options = recovery_options(dir);
    options.wal_id = id;
    options.wal_count = 2;
    auto recovered = recover(fs, options);
    REQUIRE(recovered);
    CHECK(recovered->records_read == 3);
    CHECK(indexes(*recovered, id).size() == 2);
    CHECK(indexes(*recovered, id + 2).size() == 1);
    CHECK(recovered->partitions.count(1 - id) == 0);
  }
}
