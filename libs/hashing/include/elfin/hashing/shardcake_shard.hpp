// Shardcake's shard of an id: abs(hash % N) + 1, with `hash` the id's Java String.hashCode. Shards
// are numbered 1..N. The modulo is taken before the absolute value (Java's `%` keeps the
// dividend's sign, as C++'s does), so a hash of INT32_MIN cannot overflow; the `abs(hash) % N`
// form some JVM libraries use differs for negative hashes and overflows at INT32_MIN.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

namespace elfin::hashing {

/// The largest shard count `shardcake_shard` takes: Java's int range.
inline constexpr std::uint32_t kMaxShardcakeShards = 0x7FFF'FFFF;

/// abs(hash % shards) + 1, in [1, shards]. Precondition: 1 <= shards <= kMaxShardcakeShards.
[[nodiscard]] std::uint32_t shardcake_shard(std::int32_t hash, std::uint32_t shards) noexcept;

}  // namespace elfin::hashing
