// Reading one segment file's bytes: its header, the valid records from the start, and what ends
// them. Recovery decides from this what to replay, what to cut and what to refuse; `elfin wal
// inspect` prints it. Scanning changes nothing.
//
// How the end of the records is classified:
//   Clean      the records end at the end of the file, or only zeros follow (preallocated space).
//   TornTail   a record fails its checks (CRC, length past the end, wrong sequence, bytes after
//              the zeros), and no record of a *later commit batch* is found after it. The writer
//              starts a batch only after the fdatasync of the one before succeeded, so damage
//              with nothing of a later batch behind it can be the unsynced last batch, torn by a
//              crash: nothing acknowledged is lost by cutting there.
//   Corrupt    a record fails its checks and a valid record of a later batch follows: the damaged
//              record was acknowledged. Cutting would drop acknowledged records, so it is an error.
// Damage to the last record of the last acknowledged batch, with nothing after it, looks exactly
// like a torn write and is classified TornTail; recovery keeps a copy of the file before it cuts.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <elfin/wal/format.hpp>

namespace elfin::wal {

enum class SegmentState : std::uint8_t {
  Clean,        ///< every byte accounted for: records, then nothing or zeros
  ShortHeader,  ///< the file is shorter than a segment header
  BadHeader,    ///< the header fails its magic, CRC or version check (`header_check`)
  TornTail,     ///< damage with no later batch after it (see above)
  Corrupt,      ///< damage followed by a record of a later batch
};

[[nodiscard]] std::string_view to_string(SegmentState state);

/// A valid record: where it starts and its header (the payload follows the header).
struct ScannedRecord {
  std::uint64_t offset = 0;
  RecordHeader header;
};

struct SegmentScan {
  SegmentState state = SegmentState::Clean;
  HeaderCheck header_check = HeaderCheck::Ok;
  SegmentHeader header;
  std::vector<ScannedRecord> records;  ///< the valid records, in order
  std::uint64_t valid_end = 0;         ///< the offset just past the last valid record
  std::uint64_t file_bytes = 0;
  // TornTail / Corrupt:
  std::uint64_t damage_offset = 0;                   ///< where the first bad record starts
  std::optional<std::uint64_t> damage_partition;     ///< its partition field, when its header was there
  std::string_view damage_what;                      ///< which check failed
  std::optional<std::uint64_t> later_record_offset;  ///< Corrupt: the later batch's record found
};

/// Scans the whole contents of a segment file. A length is trusted only after it was checked
/// against the rest of the file and `max_payload_bytes`, so damage never makes it allocate.
[[nodiscard]] SegmentScan scan_segment(std::span<const std::byte> bytes, std::uint64_t max_payload_bytes);

}  // namespace elfin::wal
