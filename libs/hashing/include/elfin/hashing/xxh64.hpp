// XXH64, the 64-bit xxHash (computed by libxxhash): the first half of the virtual-shard function
// `jump_hash(xxh64(key, 0), N)`. Text keys are hashed as their UTF-8 bytes with no terminator, and
// it is the numeric result, not the canonical big-endian byte string, that the jump hash takes —
// every client that routes by key must do the same to agree on a shard.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace elfin::hashing {

/// The XXH64 of `bytes` with `seed` (routing uses seed 0).
[[nodiscard]] std::uint64_t xxh64(std::span<const std::byte> bytes, std::uint64_t seed = 0) noexcept;

/// The XXH64 of the bytes of `text` (UTF-8 for text keys), without a terminator.
[[nodiscard]] std::uint64_t xxh64(std::string_view text, std::uint64_t seed = 0) noexcept;

}  // namespace elfin::hashing
