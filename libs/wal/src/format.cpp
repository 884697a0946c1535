#include <elfin/wal/format.hpp>

#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include <elfin/wal/crc32c.hpp>

namespace elfin::wal {

namespace {

// Little-endian stores and loads, byte by byte: the compiler turns them into single moves on
// little-endian machines, and the format stays the same on big-endian ones.
template <class T>
void put(std::byte* out, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
}
template <class T>
T get(const std::byte* in) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

// Header field offsets (format.hpp draws them).
constexpr std::size_t kHdrVersion = 8, kHdrWalId = 12, kHdrWalCount = 16, kHdrSegmentNo = 24, kHdrFirstSeq = 32,
                      kHdrCrc = 44;
constexpr std::size_t kRecCrc = 0, kRecLen = 4, kRecSeq = 8, kRecType = 16, kRecBatchPos = 20, kRecPartition = 24,
                      kRecTerm = 32, kRecIndex = 40;

}  // namespace

void encode_segment_header(const SegmentHeader& header, std::span<std::byte, kSegmentHeaderBytes> out) noexcept {
  std::memset(out.data(), 0, out.size());
  std::memcpy(out.data(), kSegmentMagic.data(), kSegmentMagic.size());
  put<std::uint32_t>(out.data() + kHdrVersion, header.version);
  put<std::uint32_t>(out.data() + kHdrWalId, header.wal_id);
  put<std::uint32_t>(out.data() + kHdrWalCount, header.wal_count);
  put<std::uint64_t>(out.data() + kHdrSegmentNo, header.segment_no);
  put<std::uint64_t>(out.data() + kHdrFirstSeq, header.first_sequence);
  put<std::uint32_t>(out.data() + kHdrCrc, crc32c(out.first(kHdrCrc)));
}

DecodedSegmentHeader decode_segment_header(std::span<const std::byte, kSegmentHeaderBytes> in) noexcept {
  DecodedSegmentHeader decoded;
  if (std::memcmp(in.data(), kSegmentMagic.data(), kSegmentMagic.size()) != 0) {
    decoded.check = HeaderCheck::BadMagic;
    return decoded;
  }
  if (get<std::uint32_t>(in.data() + kHdrCrc) != crc32c(in.first(kHdrCrc))) {
    decoded.check = HeaderCheck::BadCrc;
    return decoded;
  }
  auto& h = decoded.header;
  h.version = get<std::uint32_t>(in.data() + kHdrVersion);
  h.wal_id = get<std::uint32_t>(in.data() + kHdrWalId);
  h.wal_count = get<std::uint32_t>(in.data() + kHdrWalCount);
  h.segment_no = get<std::uint64_t>(in.data() + kHdrSegmentNo);
  h.first_sequence = get<std::uint64_t>(in.data() + kHdrFirstSeq);
  if (h.version != kFormatVersion) decoded.check = HeaderCheck::BadVersion;
  return decoded;
}

void encode_record(const Record& record, std::uint64_t sequence, std::uint32_t batch_pos,
                   std::span<std::byte> out) noexcept {
  std::byte* p = out.data();
  std::memset(p, 0, kRecordHeaderBytes);
  put<std::uint32_t>(p + kRecLen, static_cast<std::uint32_t>(record.payload.size()));
  put<std::uint64_t>(p + kRecSeq, sequence);
  put<std::uint16_t>(p + kRecType, record.type);
  put<std::uint32_t>(p + kRecBatchPos, batch_pos);
  put<std::uint64_t>(p + kRecPartition, record.partition);
  put<std::uint64_t>(p + kRecTerm, record.term);
  put<std::uint64_t>(p + kRecIndex, record.index);
  if (!record.payload.empty()) std::memcpy(p + kRecordHeaderBytes, record.payload.data(), record.payload.size());
  const std::size_t used = kRecordHeaderBytes + record.payload.size();
  std::memset(p + used, 0, out.size() - used);  // padding: deterministic bytes on disk
  put<std::uint32_t>(p + kRecCrc, record_crc(out.first(used)));
}

RecordHeader decode_record_header(std::span<const std::byte, kRecordHeaderBytes> in) noexcept {
  const std::byte* p = in.data();
  RecordHeader h;
  h.crc = get<std::uint32_t>(p + kRecCrc);
  h.payload_len = get<std::uint32_t>(p + kRecLen);
  h.sequence = get<std::uint64_t>(p + kRecSeq);
  h.type = get<std::uint16_t>(p + kRecType);
  h.batch_pos = get<std::uint32_t>(p + kRecBatchPos);
  h.partition = get<std::uint64_t>(p + kRecPartition);
  h.term = get<std::uint64_t>(p + kRecTerm);
  h.index = get<std::uint64_t>(p + kRecIndex);
  return h;
}

std::uint32_t record_crc(std::span<const std::byte> record) noexcept { return crc32c(record.subspan(kRecLen)); }

std::string segment_file_name(std::uint32_t wal_id, std::uint64_t segment_no) {
  return fmt::format("{:08x}-{:016x}.wal", wal_id, segment_no);
}

std::optional<SegmentName> parse_segment_file_name(std::string_view name) {
  // Exactly 8 hex digits, '-', 16 hex digits, ".wal".
  if (name.size() != 8 + 1 + 16 + 4 || name[8] != '-' || !name.ends_with(".wal")) return std::nullopt;
  auto hex = [](std::string_view digits, auto& out) {
    for (char c : digits) {
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, 16);
    return ec == std::errc{} && ptr == digits.data() + digits.size();
  };
  SegmentName parsed;
  if (!hex(name.substr(0, 8), parsed.wal_id) || !hex(name.substr(9, 16), parsed.segment_no)) return std::nullopt;
  return parsed;
}

}  // namespace elfin::wal
