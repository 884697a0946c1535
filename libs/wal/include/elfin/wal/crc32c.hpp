// CRC-32C (Castagnoli), the checksum of every WAL record and segment header.
//
// The standard definition: reflected polynomial 0x82F63B78, initial value 0xFFFFFFFF, final XOR
// 0xFFFFFFFF, so crc32c("123456789") == 0xE3069283. Computed by ISA-L, which picks a hardware path
// at run time. `crc32c(b, crc32c(a))` equals `crc32c(a ++ b)`, so a checksum can be built in parts.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace elfin::wal {

/// CRC-32C of `data`, continuing from `prior` (the CRC-32C of the bytes before; 0 for none).
[[nodiscard]] std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t prior = 0) noexcept;

}  // namespace elfin::wal
