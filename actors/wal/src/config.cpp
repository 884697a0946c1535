#include <elfin/actors/wal/config.hpp>

#include <fmt/format.h>

namespace elfin::actors::wal {

std::vector<std::string> validate(const Config& config) {
  std::vector<std::string> errors;
  if (config.dir.empty()) errors.emplace_back("dir: required (the directory of the WAL segments)");
  if (config.wal_count == 0) errors.emplace_back("wal_count: must be at least 1");
  constexpr std::uint64_t kMinSegment = std::uint64_t{64} * 1024;
  if (config.segment_bytes.bytes < kMinSegment) {
    errors.push_back(
        fmt::format("segment_bytes: {} is below the minimum of {} bytes", config.segment_bytes.bytes, kMinSegment));
  }
  if (config.max_batch_bytes.bytes == 0) errors.emplace_back("max_batch_bytes: must be above 0");
  if (config.max_batch_entries == 0) errors.emplace_back("max_batch_entries: must be above 0");
  if (config.max_payload_bytes.bytes == 0 || config.max_payload_bytes.bytes > (std::uint64_t{1} << 31)) {
    errors.emplace_back("max_payload_bytes: must be between 1 byte and 2GiB");
  }
  if (config.linger < std::chrono::microseconds{0} || config.linger > std::chrono::seconds{1}) {
    errors.emplace_back("linger: must be between 0 and 1s");
  }
  return errors;
}

std::vector<std::string> validate_change(const Config& before, const Config& after) {
  std::vector<std::string> errors = validate(after);
  if (before.dir != after.dir) {
    errors.push_back(fmt::format("dir: cannot change while the WAL runs ({:?} -> {:?})", before.dir, after.dir));
  }
  if (before.wal_count != after.wal_count) {
    errors.push_back(fmt::format("wal_count: cannot change while the WAL runs ({} -> {}); partitions are placed by it",
                                 before.wal_count, after.wal_count));
  }
  return errors;
}

}  // namespace elfin::actors::wal
