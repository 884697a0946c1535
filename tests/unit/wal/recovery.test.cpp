// Recovery: torn and zeroed tails are cut (a copy kept), damage elsewhere is an error naming the
// segment, offset and partition, a read error changes nothing, and an index seen again replaces
// everything after it.
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

// Writes `specs` (one batch per record) into a fresh WAL in `dir`; returns the offsets at which
// each record ends in the (single) segment.
std::vector<std::uint64_t> write_single_segment(FileSystem& fs, const std::string& dir, const std::vector<Spec>& specs,
                                                bool preallocate = false) {
  WriterOptions options = test_options();
  options.preallocate = preallocate;
  auto [recovery, writer] = open_wal(fs, dir, options);
  std::vector<std::uint64_t> ends;
  for (const auto& s : specs) {
    write_all(writer, {s});
    ends.push_back(writer.log().segments.back().end_offset);
  }
  REQUIRE(writer.log().segments.size() == 1);
  return ends;
}

std::size_t records_ending_by(const std::vector<std::uint64_t>& ends, std::uint64_t cut) {
  std::size_t n = 0;
  while (n < ends.size() && ends[n] <= cut) ++n;
  return n;
}

}  // namespace

TEST_CASE("truncating the last segment at every byte offset recovers exactly the records before the cut", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto original_dir = tmp.file("original");
  const auto specs = interleaved(2, 6);
  const auto ends = write_single_segment(fs, original_dir, specs);
  const auto original = read_all(segment_path(original_dir, 0));
  REQUIRE(original.size() == ends.back());

  for (std::size_t cut = 0; cut <= original.size(); ++cut) {
    INFO("cut at byte " << cut << " of " << original.size());
    const auto dir = tmp.file("cut-" + std::to_string(cut));
    std::filesystem::create_directories(dir);
    write_all_text(segment_path(dir, 0), original.substr(0, cut));

    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    const std::size_t expected = records_ending_by(ends, cut);
    REQUIRE(recovered->records_read == expected);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> p0, p1;
    for (std::size_t i = 0; i < expected; ++i) (specs[i].partition == 0 ? p0 : p1).emplace_back(specs[i].index, 1);
    REQUIRE(indexes(*recovered, 0) == p0);
    REQUIRE(indexes(*recovered, 1) == p1);
    const bool on_boundary = cut == kSegmentHeaderBytes || std::find(ends.begin(), ends.end(), cut) != ends.end();
    REQUIRE(recovered->repairs.empty() == on_boundary);
    if (!on_boundary) REQUIRE(std::filesystem::exists(segment_path(dir, 0) + ".damaged"));

    // The writer appends at the logical end; a second recovery sees the prefix plus the new record.
    {
      WriterOptions options;
      options.preallocate = false;
      auto writer = Writer::open(fs, recovered->log, options);
      REQUIRE(writer);
      write_all(*writer, {{7, 1}});
    }
    auto again = recover(fs, recovery_options(dir));
    REQUIRE(again);
    REQUIRE(again->repairs.empty());
    REQUIRE(again->records_read == expected + 1);
    REQUIRE(indexes(*again, 7) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 1}});
    REQUIRE(indexes(*again, 0) == p0);
  }
}

TEST_CASE("a zeroed tail of the last segment is cut at the last valid record", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  const auto ends = write_single_segment(fs, dir, one_partition(10), /*preallocate=*/true);
  const auto path = segment_path(dir, 0);
  auto image = read_all(path);
  REQUIRE(image.size() > ends.back());  // preallocated zeros follow the records

  SECTION("zeros from inside record 7 to the end") {
    const std::uint64_t from = ends[5] + 20;
    std::fill(image.begin() + static_cast<std::ptrdiff_t>(from), image.end(), '\0');
    write_all_text(path, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(indexes(*recovered, 0).size() == 6);
    REQUIRE(recovered->repairs.size() == 1);
    CHECK(recovered->repairs[0].offset == ends[5]);
    CHECK(recovered->repairs[0].damaged_copy == path + ".damaged");
    CHECK(read_all(path + ".damaged") == image);
    CHECK(std::filesystem::file_size(path) == ends[5]);
  }
  SECTION("a zeroed 512-byte sector inside the last record, the rest intact") {
    image.resize(ends.back());
    const std::uint64_t start = ends[8];
    std::fill(image.begin() + static_cast<std::ptrdiff_t>(start),
              image.begin() + static_cast<std::ptrdiff_t>(start + 8), '\0');
    write_all_text(path, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(indexes(*recovered, 0).size() == 9);
    REQUIRE(recovered->repairs.size() == 1);
    CHECK(recovered->repairs[0].offset == ends[8]);
  }
  SECTION("zeros exactly at a record boundary are the clean end of a preallocated segment") {
    std::fill(image.begin() + static_cast<std::ptrdiff_t>(ends[6]), image.end(), '\0');
    write_all_text(path, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    CHECK(indexes(*recovered, 0).size() == 7);
    CHECK(recovered->repairs.empty());
  }
}

TEST_CASE("a bit flipped mid-file is an error naming segment, offset and partition, and nothing is cut", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  const auto specs = interleaved(3, 5);  // record 7 (0-based) is partition 1, index 3
  const auto ends = write_single_segment(fs, dir, specs);
  const auto path = segment_path(dir, 0);
  const auto image = read_all(path);
  const std::uint64_t record_start = ends[6];

  // Any single bit of record 7 (header or payload), with later batches after it.
  for (std::uint64_t byte = record_start; byte < ends[7]; ++byte) {
    for (int bit : {0, 5}) {
      auto damaged = image;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      write_all_text(path, damaged);
      INFO("byte " << byte << " bit " << bit);
      auto recovered = recover(fs, recovery_options(dir));
      REQUIRE_FALSE(recovered);
      const Error& e = recovered.error();
      REQUIRE(e.kind == ErrorKind::CorruptRecord);
      REQUIRE(e.path == path);
      REQUIRE(e.offset == record_start);
      // The partition as its header reads (the flip may have hit that very field).
      REQUIRE(e.partition.has_value());
      if (byte < record_start + 24 || byte >= record_start + 32) REQUIRE(*e.partition == 1);
      REQUIRE(read_all(path) == damaged);  // not truncated
      REQUIRE_FALSE(std::filesystem::exists(path + ".damaged"));
    }
  }
  write_all_text(path, image);
  auto clean = recover(fs, recovery_options(dir));
  REQUIRE(clean);
  CHECK(clean->records_read == specs.size());
}

TEST_CASE("a corrupted length is an error, not a cut, and nothing is allocated for it", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  const auto ends = write_single_segment(fs, dir, interleaved(2, 4));
  const auto path = segment_path(dir, 0);
  auto image = read_all(path);
  const std::uint64_t record_start = ends[1];  // partition 0, index 2
  SECTION("past the end of the file") {
    image[record_start + 4] = '\xF0';
    image[record_start + 5] = '\xFF';
    image[record_start + 6] = '\xFF';
    image[record_start + 7] = '\x7F';
  }
  SECTION("shorter than the record (the CRC covers the length)") {
    image[record_start + 4] = static_cast<char>(image[record_start + 4] - 8);
  }
  write_all_text(path, image);
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE_FALSE(recovered);
  CHECK(recovered.error().kind == ErrorKind::CorruptRecord);
  CHECK(recovered.error().offset == record_start);
  CHECK(recovered.error().partition == 0u);
  CHECK(read_all(path) == image);
}

TEST_CASE("damage in a segment that is not the last is an error even at its tail", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 400;
  options.preallocate = false;
  {
    auto [recovery, writer] = open_wal(fs, dir, options);
    write_all(writer, one_partition(20));
    REQUIRE(writer.log().segments.size() >= 3);
  }
  const auto first = segment_path(dir, 0);
  auto image = read_all(first);

  SECTION("its last record torn") {
    image.resize(image.size() - 5);
    write_all_text(first, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE_FALSE(recovered);
    CHECK(recovered.error().kind == ErrorKind::CorruptRecord);
    CHECK(recovered.error().path == first);
  }
  SECTION("its last record cut off whole: the next segment's first sequence shows the gap") {
    const auto scan = scan_segment(bytes_of(image), 1 << 20);
    image.resize(scan.records.back().offset);
    write_all_text(first, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE_FALSE(recovered);
    CHECK(recovered.error().kind == ErrorKind::Gap);
    CHECK(recovered.error().path == segment_path(dir, 1));
    CHECK(recovered.error().found == recovered.error().expected + 1);
  }
  SECTION("a missing segment in the middle") {
    std::filesystem::remove(segment_path(dir, 1));
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE_FALSE(recovered);
    CHECK(recovered.error().kind == ErrorKind::Gap);
    CHECK(recovered.error().expected == 1);
    CHECK(recovered.error().found == 2);
  }
}

TEST_CASE("a damaged segment header is an error, and a torn one in the newest segment is moved aside", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 400;
  {
    auto [recovery, writer] = open_wal(fs, dir, options);
    write_all(writer, one_partition(12));
  }
  auto recovered_before = recover(fs, recovery_options(dir, false));
  REQUIRE(recovered_before);
  const auto last_no = recovered_before->log.segments.back().segment_no;
  const auto last = segment_path(dir, last_no);

  SECTION("a flipped header bit") {
    auto image = read_all(last);
    image[30] = static_cast<char>(image[30] ^ 1);
    write_all_text(last, image);
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE_FALSE(recovered);
    CHECK(recovered.error().kind == ErrorKind::CorruptHeader);
    CHECK(recovered.error().path == last);
  }
  SECTION("another WAL count") {
    auto options2 = recovery_options(dir);
    options2.wal_count = 4;
    auto recovered = recover(fs, options2);
    REQUIRE_FALSE(recovered);
    CHECK(recovered.error().kind == ErrorKind::Mismatch);
    CHECK(recovered.error().expected == 4);
    CHECK(recovered.error().found == 1);
  }
  SECTION("the newest segment cut inside its header") {
    write_all_text(last, read_all(last).substr(0, 20));
    auto recovered = recover(fs, recovery_options(dir));
    REQUIRE(recovered);
    REQUIRE(recovered->repairs.size() == 1);
    CHECK(recovered->repairs[0].kind == Repair::Kind::ShortHeader);
    CHECK_FALSE(std::filesystem::exists(last));
    CHECK(std::filesystem::exists(last + ".damaged"));
    const auto kept = recovered->records_read;
    CHECK(kept == recovered_before->records_read - recovered_before->log.segments.back().records);
    // The writer re-creates the segment under the same number and continues the sequence.
    {
      auto writer = Writer::open(fs, recovered->log, options);
      REQUIRE(writer);
      write_all(*writer, {{0, 100}});
      CHECK(writer->log().segments.back().segment_no == last_no);
    }
    auto again = recover(fs, recovery_options(dir));
    REQUIRE(again);
    CHECK(again->records_read == kept + 1);
  }
}

TEST_CASE("a record for an index seen before replaces it and every later one (stale entries never return)", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  WriterOptions options;
  options.segment_bytes = 600;  // the rewrite lands in later segments
  {
    auto [recovery, writer] = open_wal(fs, dir, options);
    std::vector<Spec> specs;
    for (std::uint64_t i = 1; i <= 10; ++i) specs.push_back({5, i, 1});
    specs.push_back({6, 1, 1});
    for (std::uint64_t i = 6; i <= 8; ++i) specs.push_back({5, i, 2});  // a new leader rewrites from 6
    specs.push_back({6, 2, 1});
    write_all(writer, specs, 2);
    REQUIRE(writer.log().segments.size() > 1);
  }
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE(recovered);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected{{1, 1}, {2, 1}, {3, 1}, {4, 1},
                                                                      {5, 1}, {6, 2}, {7, 2}, {8, 2}};
  CHECK(indexes(*recovered, 5) == expected);  // 9 and 10 of term 1 do not come back
  CHECK(recovered->ranges.at(5) == IndexRange{1, 8, 8});
  CHECK(indexes(*recovered, 6).size() == 2);  // other partitions are untouched

  SECTION("the same with ranges only") {
    auto options2 = recovery_options(dir);
    options2.keep_entries = false;
    auto ranges = recover(fs, options2);
    REQUIRE(ranges);
    CHECK(ranges->partitions.empty());
    CHECK(ranges->ranges.at(5) == IndexRange{1, 8, 8});
  }
}

TEST_CASE("a read error during recovery fails it and truncates nothing", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  write_single_segment(posix, dir, one_partition(5));
  const auto path = segment_path(dir, 0);
  // A torn tail that recovery would cut if it could read the file.
  auto image = read_all(path);
  image.resize(image.size() - 3);
  write_all_text(path, image);

  FaultFileSystem fs(posix, dir);
  fs.fail_reads(Errno{EIO});
  auto recovered = recover(fs, recovery_options(dir));
  REQUIRE_FALSE(recovered);
  CHECK(recovered.error().kind == ErrorKind::ReadFailed);
  CHECK(recovered.error().op == IoOp::Read);
  CHECK(recovered.error().path == path);
  CHECK(recovered.error().sys_errno == EIO);
  CHECK(read_all(path) == image);
  CHECK_FALSE(std::filesystem::exists(path + ".damaged"));
}

TEST_CASE("recovery is idempotent, also after a crash in the middle of its repair", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.file("wal");
  const auto ends = write_single_segment(posix, dir, one_partition(6));
  const auto path = segment_path(dir, 0);
  write_all_text(path, read_all(path).substr(0, ends[3] + 11));

  for (std::uint64_t crash_at = 0;; ++crash_at) {
    INFO("crash after " << crash_at << " mutating calls");
    const auto torn = read_all(path);
    FaultFileSystem fs(posix, dir);
    fs.crash_after(crash_at);
    auto first = recover(fs, recovery_options(dir));
    const bool crashed = fs.crashed();
    fs.power_loss();
    auto second = recover(fs, recovery_options(dir));
    REQUIRE(second);
    REQUIRE(indexes(*second, 0).size() == 4);
    auto third = recover(fs, recovery_options(dir));
    REQUIRE(third);
    REQUIRE(third->repairs.empty());
    REQUIRE(third->partitions == second->partitions);
    if (!crashed) {
      REQUIRE(first);
      break;
    }
    std::filesystem::remove(path + ".damaged");
    write_all_text(path, torn);
  }
}

TEST_CASE("verify mode reports a torn tail without changing the file", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  const auto ends = write_single_segment(fs, dir, one_partition(4));
  const auto path = segment_path(dir, 0);
  write_all_text(path, read_all(path).substr(0, ends[2] + 9));
  const auto before = read_all(path);
  auto recovered = recover(fs, recovery_options(dir, /*repair=*/false));
  REQUIRE(recovered);
  REQUIRE(recovered->repairs.size() == 1);
  CHECK(recovered->repairs[0].offset == ends[2]);
  CHECK(recovered->repairs[0].damaged_copy.empty());
  CHECK(read_all(path) == before);
  // A writer may not append behind a tail that is still torn.
  auto writer = Writer::open(fs, recovered->log, test_options());
  REQUIRE_FALSE(writer);
  CHECK(writer.error().kind == ErrorKind::NotRepaired);
}

TEST_CASE("recovery returns each partition's latest hard state apart from its entries and applies truncations",
          "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  {
    auto [recovery, writer] = open_wal(fs, dir);
    write_all(writer, {{2, 1, 1}, {2, 2, 1}, {2, 3, 1}});  // partition, index, term
    const auto first = encode_hard_state({1, 7, 2});
    REQUIRE(writer.append(Record{record_type::kHardState, 2, 1, 0, first}));
    REQUIRE(writer.commit());
    REQUIRE(writer.append(Record{record_type::kTruncate, 2, 0, 2, {}}));
    const auto second = encode_hard_state({2, 8, 2});
    REQUIRE(writer.append(Record{record_type::kHardState, 2, 2, 0, second}));
    REQUIRE(writer.commit());
  }
  for (const bool keep_entries : {true, false}) {
    INFO("keep_entries = " << keep_entries);
    auto options = recovery_options(dir);
    options.keep_entries = keep_entries;
    auto recovered = recover(fs, options);
    REQUIRE(recovered);
    CHECK(recovered->hard_states.at(2) == HardState{2, 8, 2});
    CHECK(recovered->ranges.at(2) == IndexRange{1, 2, 2});
    if (keep_entries)
      CHECK(indexes(*recovered, 2) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 1}, {2, 1}});
  }
}

TEST_CASE("recovery drops a partition's entries up to its highest checkpoint record and reports the checkpoint",
          "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  {
    auto [recovery, writer] = open_wal(fs, dir);
    write_all(writer, {{4, 1, 1}, {4, 2, 1}, {4, 3, 1}, {4, 4, 1}, {5, 1, 1}, {5, 2, 1}});
    REQUIRE(writer.append(Record{record_type::kCheckpoint, 4, 0, 2, {}}));
    REQUIRE(writer.commit());
    write_all(writer, {{4, 5, 2}});
    // A lower checkpoint written later does not bring entries back.
    REQUIRE(writer.append(Record{record_type::kCheckpoint, 4, 0, 1, {}}));
    REQUIRE(writer.commit());
  }
  for (const bool keep_entries : {true, false}) {
    INFO("keep_entries = " << keep_entries);
    auto options = recovery_options(dir);
    options.keep_entries = keep_entries;
    auto recovered = recover(fs, options);
    REQUIRE(recovered);
    CHECK(recovered->checkpoints.at(4) == 2);
    CHECK_FALSE(recovered->checkpoints.contains(5));
    CHECK(recovered->ranges.at(4) == IndexRange{3, 5, 3});
    CHECK(recovered->ranges.at(5) == IndexRange{1, 2, 2});
    if (keep_entries)
      CHECK(indexes(*recovered, 4) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{3, 1}, {4, 1}, {5, 2}});
  }
}

TEST_CASE("stored_wal_count reads the count a directory's segments were created with", "[wal]") {
  TempDir tmp;
  PosixFileSystem fs;
  const auto dir = tmp.file("wal");
  CHECK_FALSE(stored_wal_count(fs, dir));  // no directory yet
  for (std::uint32_t id : {0u, 1u}) {
    auto writer = open_shared_wal(fs, dir, id, 3);
    write_all(writer, {{id, 1}});
  }
  // A file named like a segment of WAL 2 whose header does not check out says nothing.
  write_all_text(segment_path(dir, 0, 2), std::string(kSegmentHeaderBytes, 'x'));
  CHECK(stored_wal_count(fs, dir) == std::optional<std::uint32_t>{3});
  CHECK(stored_wal_count(fs, dir, 1) == std::optional<std::uint32_t>{3});
  CHECK_FALSE(stored_wal_count(fs, dir, 2));
  CHECK_FALSE(stored_wal_count(fs, tmp.file("empty")));
}
