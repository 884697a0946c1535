// Shardcake's shard of a hash, abs(hash % N) + 1: the edge cases the JVM form gets wrong.
#include <cstdint>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include <elfin/hashing/java_string_hash.hpp>
#include <elfin/hashing/shardcake_shard.hpp>

using elfin::hashing::shardcake_shard;

TEST_CASE("shardcake_shard is abs(hash % N) + 1, numbering shards from 1", "[hashing]") {
  CHECK(shardcake_shard(0, 300) == 1);
  CHECK(shardcake_shard(99162322, 300) == 23);  // "hello"
  CHECK(shardcake_shard(299, 300) == 300);
  CHECK(shardcake_shard(300, 300) == 1);
  // The remainder keeps the dividend's sign, then loses it: -1 % 300 = -1, so shard 2.
  CHECK(shardcake_shard(-1, 300) == 2);
  CHECK(shardcake_shard(-147170163, 300) == 64);  // "user:42"
  CHECK(shardcake_shard(12345, 1) == 1);
}

TEST_CASE("shardcake_shard handles a hash of INT32_MIN without overflow", "[hashing]") {
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  CHECK(shardcake_shard(kMin, 300) == 249);  // 2147483648 % 300 = 248
  CHECK(shardcake_shard(kMin, 1024) == 1);   // a multiple of 1024
  CHECK(shardcake_shard(kMin, 0x7FFFFFFF) == 2);
  CHECK(shardcake_shard(std::numeric_limits<std::int32_t>::max(), 0x7FFFFFFF) == 1);
}

TEST_CASE("shardcake_shard stays in [1, N] for any hash", "[hashing]") {
  std::mt19937 random(300);
  for (std::uint32_t n : {1u, 2u, 300u, 1024u, 0x7FFFFFFFu}) {
    for (int i = 0; i < 10000; ++i) {
      const auto shard = shardcake_shard(static_cast<std::int32_t>(random()), n);
      REQUIRE(shard >= 1);
      REQUIRE(shard <= n);
    }
  }
}
