// Writes a small WAL for the `elfin wal` command's tests: two segments of three partitions, then
// optionally damages it.
//   elfin_wal_fixture DIR clean     intact
//   elfin_wal_fixture DIR torn      the last segment's last record cut short (a torn tail)
//   elfin_wal_fixture DIR corrupt   one bit flipped in a record of partition 1 of the first segment
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/wal/format.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/writer.hpp>

namespace wal = elfin::wal;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: elfin_wal_fixture DIR clean|torn|corrupt\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string_view mode = argv[2];
  std::filesystem::remove_all(dir);
  wal::PosixFileSystem fs;
  wal::RecoveryOptions recovery;
  recovery.dir = dir;
  auto recovered = wal::recover(fs, recovery);
  if (!recovered) return std::fprintf(stderr, "%s\n", wal::to_string(recovered.error()).c_str()), 1;
  wal::WriterOptions options;
  options.segment_bytes = 1024;
  options.preallocate = false;
  {
    auto writer = wal::Writer::open(fs, recovered->log, options);
    if (!writer) return std::fprintf(stderr, "%s\n", wal::to_string(writer.error()).c_str()), 1;
    for (std::uint64_t index = 1; index <= 8; ++index) {
      for (std::uint64_t partition = 0; partition < 3; ++partition) {
        const std::string text = fmt::format("partition {} entry {}", partition, index);
        const auto* data = reinterpret_cast<const std::byte*>(text.data());
        if (!writer->append(wal::Record{1, partition, 1, index, {data, text.size()}})) return 1;
      }
      if (!writer->commit()) return 1;
    }
  }
  const std::string first = wal::join_path(dir, wal::segment_file_name(0, 0));
  const std::string last = wal::join_path(dir, wal::segment_file_name(0, 1));
  if (!std::filesystem::exists(last)) return std::fprintf(stderr, "expected two segments\n"), 1;
  if (mode == "torn") {
    std::filesystem::resize_file(last, std::filesystem::file_size(last) - 10);
  } else if (mode == "corrupt") {
    std::fstream file(first, std::ios::in | std::ios::out | std::ios::binary);
    // Record 2 (partition 1, index 1): 48-byte segment header, then record 1 of 72 bytes; flip a
    // bit in record 2's payload.
    file.seekg(48 + 72 + 50);
    char c = 0;
    file.get(c);
    file.seekp(48 + 72 + 50);
    file.put(static_cast<char>(c ^ 0x04));
  } else if (mode != "clean") {
    return 2;
  }
  return 0;
}
