// The on-disk format: headers and records encode and decode, names parse, damage is classified.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

#include <elfin/wal/format.hpp>
#include <elfin/wal/segment_scan.hpp>

#include "wal_test_support.hpp"

using namespace elfin::wal;
using elfin::wal::test::bytes_of;

namespace {

// A segment image: header, then `n` records of partition 3 (one batch each), then `zeros` bytes.
std::vector<std::byte> segment_image(std::uint64_t n, std::size_t zeros = 0, std::uint64_t first_sequence = 0) {
  std::vector<std::byte> out(kSegmentHeaderBytes);
  SegmentHeader h;
  h.first_sequence = first_sequence;
  encode_segment_header(h, std::span<std::byte, kSegmentHeaderBytes>(out.data(), kSegmentHeaderBytes));
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto payload = bytes_of(elfin::wal::test::payload_text(3, i + 1));
    const std::size_t at = out.size();
    out.resize(at + record_bytes(payload.size()));
    encode_record(Record{1, 3, 1, i + 1, payload}, first_sequence + i, 0, std::span(out).subspan(at));
  }
  out.resize(out.size() + zeros);
  return out;
}

}  // namespace

TEST_CASE("a segment header round-trips and any changed byte fails its check", "[wal]") {
  SegmentHeader h{kFormatVersion, 7, 4, 12, 9000};
  std::array<std::byte, kSegmentHeaderBytes> bytes{};
  encode_segment_header(h, bytes);
  const auto decoded = decode_segment_header(bytes);
  CHECK(decoded.check == HeaderCheck::Ok);
  CHECK(decoded.header == h);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto damaged = bytes;
    damaged[i] ^= std::byte{0x10};
    INFO("byte " << i);
    CHECK(decode_segment_header(damaged).check != HeaderCheck::Ok);
  }
}

TEST_CASE("records are 8-byte aligned and padded with zeros", "[wal]") {
  CHECK(record_bytes(0) == 48);
  CHECK(record_bytes(1) == 56);
  CHECK(record_bytes(8) == 56);
  CHECK(record_bytes(9) == 64);
  const auto payload = bytes_of("abc");
  std::vector<std::byte> out(record_bytes(payload.size()), std::byte{0xEE});
  encode_record(Record{5, 2, 3, 4, payload}, 77, 1, out);
  const auto h = decode_record_header(std::span<const std::byte, kRecordHeaderBytes>(out.data(), kRecordHeaderBytes));
  CHECK(h.payload_len == 3);
  CHECK(h.sequence == 77);
  CHECK(h.type == 5);
  CHECK(h.batch_pos == 1);
  CHECK(h.partition == 2);
  CHECK(h.term == 3);
  CHECK(h.index == 4);
  CHECK(h.crc == record_crc(std::span(out).first(kRecordHeaderBytes + 3)));
  for (std::size_t i = kRecordHeaderBytes + 3; i < out.size(); ++i) CHECK(out[i] == std::byte{0});
}

TEST_CASE("segment file names parse back and other names are not segments", "[wal]") {
  const auto name = segment_file_name(0x2a, 0x1234);
  CHECK(name == "0000002a-0000000000001234.wal");
  const auto parsed = parse_segment_file_name(name);
  REQUIRE(parsed);
  CHECK(parsed->wal_id == 0x2a);
  CHECK(parsed->segment_no == 0x1234);
  CHECK_FALSE(parse_segment_file_name(name + ".tmp"));
  CHECK_FALSE(parse_segment_file_name(name + ".damaged"));
  CHECK_FALSE(parse_segment_file_name("0000002A-0000000000001234.wal"));
  CHECK_FALSE(parse_segment_file_name("0000002a_0000000000001234.wal"));
}

TEST_CASE("a scan of a clean segment with preallocated zeros finds every record", "[wal]") {
  const auto image = segment_image(5, 4096);
  const auto scan = scan_segment(image, 1 << 20);
  CHECK(scan.state == SegmentState::Clean);
  CHECK(scan.records.size() == 5);
  CHECK(scan.valid_end == image.size() - 4096);
}

TEST_CASE("a scan calls non-zero bytes after the zeros a torn tail, not the end", "[wal]") {
  auto image = segment_image(3, 512);
  const std::size_t end = image.size() - 512;
  image[end + 300] = std::byte{1};
  const auto scan = scan_segment(image, 1 << 20);
  CHECK(scan.state == SegmentState::TornTail);
  CHECK(scan.damage_offset == end);
  CHECK(scan.records.size() == 3);
}

TEST_CASE("a huge length is damage, checked before anything is allocated", "[wal]") {
  auto image = segment_image(4);
  const auto scan_ok = scan_segment(image, 1 << 20);
  REQUIRE(scan_ok.records.size() == 4);
  const std::uint64_t second = scan_ok.records[1].offset;
  // payload_len of the second record := 0xFFFFFFF0
  image[second + 4] = std::byte{0xF0};
  image[second + 5] = std::byte{0xFF};
  image[second + 6] = std::byte{0xFF};
  image[second + 7] = std::byte{0xFF};
  const auto scan = scan_segment(image, 1 << 20);
  CHECK(scan.state == SegmentState::Corrupt);  // records 3 and 4 (later batches) follow
  CHECK(scan.damage_offset == second);
  CHECK(scan.damage_partition == 3u);
  CHECK(scan.records.size() == 1);
}

TEST_CASE("a record copied to the wrong place fails the sequence check", "[wal]") {
  auto image = segment_image(3);
  const auto scan_ok = scan_segment(image, 1 << 20);
  const std::uint64_t first = scan_ok.records[0].offset;
  const std::uint64_t second = scan_ok.records[1].offset;
  const std::uint64_t third = scan_ok.records[2].offset;
  REQUIRE(second - first == third - second);  // same size: the copy fits exactly
  std::memcpy(image.data() + second, image.data() + first, second - first);
  const auto scan = scan_segment(image, 1 << 20);
  CHECK(scan.state == SegmentState::Corrupt);
  CHECK(scan.damage_offset == second);
  CHECK(scan.damage_what == "record out of sequence");
}
