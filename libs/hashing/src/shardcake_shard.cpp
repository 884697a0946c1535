#include <elfin/hashing/shardcake_shard.hpp>

#include <cassert>

namespace elfin::hashing {

std::uint32_t shardcake_shard(std::int32_t hash, std::uint32_t shards) noexcept {
  assert(shards >= 1 && shards <= kMaxShardcakeShards);
  // In int64 the remainder of INT32_MIN is computed without overflow, and C++'s `%` truncates
  // toward zero like Java's, so |remainder| < shards.
  const std::int64_t remainder = static_cast<std::int64_t>(hash) % static_cast<std::int64_t>(shards);
  return static_cast<std::uint32_t>(remainder < 0 ? -remainder : remainder) + 1;
}

}  // namespace elfin::hashing
