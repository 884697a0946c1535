// The on-disk format of a WAL: segment files, each a header followed by records. All integers are
// little-endian; every record starts at a multiple of 8 bytes.
//
//   segment  <wal_id:8 hex>-<segment_no:16 hex>.wal
//   +--------------------------- header, 48 bytes -------------------------------+
//   | magic "ELFINWAL" | version u32 | wal_id u32 | wal_count u32 | reserved u32   |
//   | segment_no u64   | first_sequence u64 | reserved u32 | crc32c u32 (of 0..44) |
//   +--------------------------- records ----------------------------------------+
//   | record | record | ... | zeros (preallocated, never written) ...             |
//
//   record   (48-byte header + payload, padded with zeros to a multiple of 8)
//   | crc32c u32 | payload_len u32 | sequence u64 | type u16 | reserved u16 |
//   | batch_pos u32 | partition u64 | term u64 | index u64 | payload ... | pad |
//
// The record CRC covers bytes 4 .. 48 + payload_len (all but itself), so a damaged length or
// header fails the check like a damaged payload; the length is checked against the rest of the
// file and `max_record_bytes` before it is trusted. The crc and the length share the first
// 8-byte word, which a torn write never splits. `sequence` numbers the records of the WAL, so a
// record in the wrong place is caught; `batch_pos` is the record's position within its commit
// batch, which lets recovery tell a torn last batch from damage to an acknowledged one (see
// segment_scan.hpp). `type` 0 is never written: an all-zero header is the end of the records.
//
// Thread safety: pure functions over bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <elfin/wal/record.hpp>

namespace elfin::wal {

inline constexpr std::array<char, 8> kSegmentMagic{'E', 'L', 'F', 'I', 'N', 'W', 'A', 'L'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kSegmentHeaderBytes = 48;
inline constexpr std::size_t kRecordHeaderBytes = 48;
inline constexpr std::size_t kRecordAlign = 8;

/// The bytes a record with `payload_len` bytes of payload occupies in a segment.
[[nodiscard]] constexpr std::uint64_t record_bytes(std::uint64_t payload_len) noexcept {
  return (kRecordHeaderBytes + payload_len + kRecordAlign - 1) / kRecordAlign * kRecordAlign;
}

struct SegmentHeader {
  std::uint32_t version = kFormatVersion;
  std::uint32_t wal_id = 0;
  std::uint32_t wal_count = 1;
  std::uint64_t segment_no = 0;
  std::uint64_t first_sequence = 0;

  friend bool operator==(const SegmentHeader&, const SegmentHeader&) = default;
};

/// Writes the 48-byte header (magic and CRC included) into `out`.
void encode_segment_header(const SegmentHeader& header, std::span<std::byte, kSegmentHeaderBytes> out) noexcept;

enum class HeaderCheck : std::uint8_t { Ok, BadMagic, BadCrc, BadVersion };
struct DecodedSegmentHeader {
  HeaderCheck check = HeaderCheck::Ok;
  SegmentHeader header;
};
/// Decodes and checks a header (the version is checked after the CRC).
[[nodiscard]] DecodedSegmentHeader decode_segment_header(std::span<const std::byte, kSegmentHeaderBytes> in) noexcept;

struct RecordHeader {
  std::uint32_t crc = 0;
  std::uint32_t payload_len = 0;
  std::uint64_t sequence = 0;
  std::uint16_t type = 0;
  std::uint32_t batch_pos = 0;
  std::uint64_t partition = 0;
  std::uint64_t term = 0;
  std::uint64_t index = 0;
};

/// Encodes `record` with its sequence and batch position into `out` (record_bytes(payload) long):
/// header, payload, zero padding, CRC.
void encode_record(const Record& record, std::uint64_t sequence, std::uint32_t batch_pos,
                   std::span<std::byte> out) noexcept;
/// Reads the fields of a record header (no check).
[[nodiscard]] RecordHeader decode_record_header(std::span<const std::byte, kRecordHeaderBytes> in) noexcept;
/// The CRC a record with this header and payload must carry (`record` = header + payload bytes).
[[nodiscard]] std::uint32_t record_crc(std::span<const std::byte> record) noexcept;

/// `<wal_id:08x>-<segment_no:016x>.wal`.
[[nodiscard]] std::string segment_file_name(std::uint32_t wal_id, std::uint64_t segment_no);
struct SegmentName {
  std::uint32_t wal_id = 0;
  std::uint64_t segment_no = 0;
};
/// Parses a segment file name; nullopt for any other name (temporaries, damaged copies).
[[nodiscard]] std::optional<SegmentName> parse_segment_file_name(std::string_view name);

/// The suffix of a segment being created (renamed to its final name once its header is durable).
inline constexpr std::string_view kTempSuffix = ".tmp";
/// The suffix of the copy recovery keeps of a segment before it cuts a torn tail off.
inline constexpr std::string_view kDamagedSuffix = ".damaged";

}  // namespace elfin::wal
