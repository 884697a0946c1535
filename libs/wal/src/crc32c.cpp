#include <elfin/wal/crc32c.hpp>

#include <algorithm>
#include <limits>

#include <isa-l/crc.h>

namespace elfin::wal {

// ISA-L's crc32_iscsi works on the raw register: it neither inverts the seed on entry nor the
// result on exit. The standard CRC-32C does both, so the inversions are ours; with them, chaining
// is the standard identity (continuing from a finished CRC re-inverts it into the register).
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t prior) noexcept {
  std::uint32_t reg = ~prior;
  // ISA-L takes an int length; feed larger spans in pieces.
  constexpr std::size_t kChunk = std::numeric_limits<int>::max() / 2;
  // ISA-L's signature takes a mutable pointer but only reads the buffer.
  auto* bytes = const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(data.data()));
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min(kChunk, data.size() - done);
    reg = crc32_iscsi(bytes + done, static_cast<int>(n), reg);
    done += n;
  }
  return ~reg;
}

}  // namespace elfin::wal
