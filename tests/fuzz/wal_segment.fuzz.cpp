// Fuzzes the WAL segment scanner (libs/wal, segment_scan.hpp), which reads whatever is on disk
// after a crash or a disk fault: it must never read out of bounds, allocate by a damaged length,
// or report records that do not check out.
//
// Input: the first byte picks a mode; odd: the rest follows a valid segment header (so the fuzzer
// spends its time on records), even: the rest is the whole file.
// Seeds (tests/fuzz/corpus/wal): a 0 byte, then real segments written by tests/cli/wal_fixture.
//   cmake --build build-fuzz --target elfin_wal_segment_fuzzer   (configured as tests/fuzz/run.sh does)
//   build-fuzz/tests/fuzz/elfin_wal_segment_fuzzer -max_total_time=30 build-fuzz/corpus/wal tests/fuzz/corpus/wal
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <elfin/wal/format.hpp>
#include <elfin/wal/segment_scan.hpp>

namespace wal = elfin::wal;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool with_header = (data[0] & 1) != 0;
  std::vector<std::byte> file;
  if (with_header) {
    std::array<std::byte, wal::kSegmentHeaderBytes> header{};
    wal::encode_segment_header(wal::SegmentHeader{}, header);
    file.assign(header.begin(), header.end());
  }
  for (std::size_t i = 1; i < size; ++i) file.push_back(static_cast<std::byte>(data[i]));

  const auto scan = wal::scan_segment(file, 1 << 16);
  // Invariants: valid records lie inside the file, in order, each checking out.
  std::uint64_t end = wal::kSegmentHeaderBytes;
  for (const auto& rec : scan.records) {
    if (rec.offset != end) std::abort();
    end += wal::record_bytes(rec.header.payload_len);
    if (end > file.size()) std::abort();
    const auto bytes =
        std::span<const std::byte>(file).subspan(rec.offset, wal::kRecordHeaderBytes + rec.header.payload_len);
    if (wal::record_crc(bytes) != rec.header.crc) std::abort();
  }
  if (!scan.records.empty() && scan.valid_end != end) std::abort();
  if ((scan.state == wal::SegmentState::TornTail || scan.state == wal::SegmentState::Corrupt) &&
      (scan.damage_offset != scan.valid_end || scan.damage_offset > file.size())) {
    std::abort();
  }
  return 0;
}
