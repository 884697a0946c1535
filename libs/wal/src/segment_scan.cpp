#include <elfin/wal/segment_scan.hpp>

#include <algorithm>

namespace elfin::wal {

std::string_view to_string(SegmentState state) {
  switch (state) {
    case SegmentState::Clean:
      return "clean";
    case SegmentState::ShortHeader:
      return "short header";
    case SegmentState::BadHeader:
      return "bad header";
    case SegmentState::TornTail:
      return "torn tail";
    case SegmentState::Corrupt:
      return "corrupt";
  }
  return "unknown";
}

namespace {

bool all_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

enum class Check : std::uint8_t { Ok, Zero, Short, Type, Length, PastEnd, Crc };

// Checks the record at `pos` by itself (not its sequence).
Check check_record(std::span<const std::byte> bytes, std::uint64_t pos, std::uint64_t max_payload, RecordHeader& out) {
  const std::uint64_t left = bytes.size() - pos;
  if (left < kRecordHeaderBytes) return all_zero(bytes.subspan(pos)) ? Check::Zero : Check::Short;
  const auto head = bytes.subspan(pos).first<kRecordHeaderBytes>();
  if (all_zero(head)) return Check::Zero;
  out = decode_record_header(head);
  if (out.type == 0) return Check::Type;
  if (out.payload_len > max_payload) return Check::Length;
  if (record_bytes(out.payload_len) > left) return Check::PastEnd;
  if (record_crc(bytes.subspan(pos, kRecordHeaderBytes + out.payload_len)) != out.crc) return Check::Crc;
  return Check::Ok;
}

std::string_view describe(Check check) {
  switch (check) {
    case Check::Ok:
      return "";
    case Check::Zero:
      return "non-zero bytes after the end of the records";
    case Check::Short:
      return "incomplete record header at the end of the file";
    case Check::Type:
      return "record type 0";
    case Check::Length:
      return "record length over the maximum";
    case Check::PastEnd:
      return "record length past the end of the file";
    case Check::Crc:
      return "CRC mismatch";
  }
  return "";
}

// Looks for a valid record after the damage at `from` that belongs to a later commit batch than
// the record expected there (sequence `expected`). A valid record of the same batch is skipped:
// a torn batch may have reached the disk out of order. A valid record with a sequence below
// `expected` cannot come from a torn write of new records, so it counts as damage proof too.
std::optional<std::uint64_t> later_batch_record(std::span<const std::byte> bytes, std::uint64_t from,
                                                std::uint64_t expected, std::uint64_t max_payload) {
  for (std::uint64_t pos = from; pos + kRecordHeaderBytes <= bytes.size();) {
    RecordHeader h;
    if (check_record(bytes, pos, max_payload, h) != Check::Ok) {
      pos += kRecordAlign;
      continue;
    }
    if (h.sequence < expected || h.batch_pos > h.sequence || h.sequence - h.batch_pos > expected) return pos;
    pos += record_bytes(h.payload_len);
  }
  return std::nullopt;
}

}  // namespace

SegmentScan scan_segment(std::span<const std::byte> bytes, std::uint64_t max_payload_bytes) {
  SegmentScan scan;
  scan.file_bytes = bytes.size();
  if (bytes.size() < kSegmentHeaderBytes) {
    scan.state = SegmentState::ShortHeader;
    return scan;
  }
  const auto decoded = decode_segment_header(bytes.first<kSegmentHeaderBytes>());
  scan.header_check = decoded.check;
  scan.header = decoded.header;
  if (decoded.check != HeaderCheck::Ok) {
    scan.state = SegmentState::BadHeader;
    return scan;
  }
  std::uint64_t pos = kSegmentHeaderBytes;
  std::uint64_t sequence = scan.header.first_sequence;
  scan.valid_end = pos;
  while (pos < bytes.size()) {
    RecordHeader h;
    const Check check = check_record(bytes, pos, max_payload_bytes, h);
    if (check == Check::Ok && h.sequence == sequence) {
      scan.records.push_back({pos, h});
      pos += record_bytes(h.payload_len);
      scan.valid_end = pos;
      ++sequence;
      continue;
    }
    if (check == Check::Zero && all_zero(bytes.subspan(pos))) return scan;  // clean end
    scan.damage_offset = pos;
    scan.damage_what = check == Check::Ok ? "record out of sequence" : describe(check);
    if (bytes.size() - pos >= kRecordHeaderBytes && check != Check::Zero) {
      scan.damage_partition = decode_record_header(bytes.subspan(pos).first<kRecordHeaderBytes>()).partition;
    }
    scan.later_record_offset = later_batch_record(bytes, pos, sequence, max_payload_bytes);
    scan.state = scan.later_record_offset ? SegmentState::Corrupt : SegmentState::TornTail;
    return scan;
  }
  return scan;
}

}  // namespace elfin::wal
