// ShardFunction: the versioned value stored in the cluster configuration — its written form, its
// checks, and that `shard_of` is exactly the documented formula of each algorithm.
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/hashing/java_string_hash.hpp>
#include <elfin/hashing/jump_hash.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/hashing/shardcake_shard.hpp>
#include <elfin/hashing/xxh64.hpp>

using namespace elfin::hashing;

TEST_CASE("shard functions are written as name/version:shards and read back", "[hashing]") {
  CHECK(ShardFunction::jump_xxh64_default().to_string() == "jump-xxh64/1:1024");
  CHECK(ShardFunction::shardcake_default().to_string() == "shardcake/1:300");
  for (const char* text : {"jump-xxh64/1:1024", "shardcake/1:300", "jump-xxh64/1:1", "shardcake/1:2147483647"}) {
    auto function = ShardFunction::parse(text);
    REQUIRE(function.ok());
    CHECK(function->to_string() == text);
    CHECK(fmt::format("{}", *function) == text);
  }
  auto shardcake = ShardFunction::parse("shardcake/1:300");
  REQUIRE(shardcake.ok());
  CHECK(shardcake->algorithm() == ShardAlgorithm::Shardcake);
  CHECK(shardcake->version() == 1);
  CHECK(shardcake->shard_count() == 300);
  CHECK(shardcake->first_shard() == 1);
  CHECK(shardcake->last_shard() == 300);
  CHECK(ShardFunction{}.first_shard() == 0);
  CHECK(ShardFunction{}.last_shard() == 1023);
}

TEST_CASE("reading a shard function refuses bad text with a typed error", "[hashing]") {
  auto kind_of = [](std::string_view text) {
    auto function = ShardFunction::parse(text);
    REQUIRE_FALSE(function.ok());
    return function.error().kind;
  };
  CHECK(kind_of("") == ShardFunctionErrorKind::Malformed);
  CHECK(kind_of("jump-xxh64") == ShardFunctionErrorKind::Malformed);
  CHECK(kind_of("jump-xxh64:1024/1") == ShardFunctionErrorKind::Malformed);
  CHECK(kind_of("jump-xxh64/:1024") == ShardFunctionErrorKind::Malformed);
  CHECK(kind_of("jump-xxh64/-1:1024") == ShardFunctionErrorKind::Malformed);
  CHECK(kind_of("jump/1:1024") == ShardFunctionErrorKind::UnknownAlgorithm);
  CHECK(kind_of("jump-xxh64/2:1024") == ShardFunctionErrorKind::UnknownVersion);
  CHECK(kind_of("shardcake/0:300") == ShardFunctionErrorKind::UnknownVersion);
  CHECK(kind_of("shardcake/1:0") == ShardFunctionErrorKind::BadShardCount);
  CHECK(kind_of("shardcake/1:") == ShardFunctionErrorKind::BadShardCount);
  CHECK(kind_of("shardcake/1:+3") == ShardFunctionErrorKind::BadShardCount);
  CHECK(kind_of("shardcake/1:300 ") == ShardFunctionErrorKind::BadShardCount);
  CHECK(kind_of("shardcake/1:2147483648") == ShardFunctionErrorKind::BadShardCount);
  CHECK(kind_of("shardcake/1:99999999999") == ShardFunctionErrorKind::BadShardCount);

  auto error = ShardFunction::parse("jump/1:1024");
  REQUIRE_FALSE(error.ok());
  CHECK(fmt::format("{}", error.error()) ==
        "shard function `jump`: unknown algorithm (expected jump-xxh64 or shardcake)");
  CHECK_FALSE(ShardFunction::create(ShardAlgorithm::JumpXxh64, 1, 0).ok());
  CHECK(ShardFunction::latest(ShardAlgorithm::Shardcake, 300).value() == ShardFunction::shardcake_default());
}

TEST_CASE("a pod whose shard function differs in name, version or count is refused, naming both", "[hashing]") {
  const ShardFunction cluster = ShardFunction::jump_xxh64_default();
  CHECK(check_matches(cluster, ShardFunction::parse("jump-xxh64/1:1024").value()).ok());

  auto other_count = check_matches(cluster, ShardFunction::parse("jump-xxh64/1:1000").value());
  REQUIRE_FALSE(other_count.ok());
  CHECK(other_count.error().cluster == cluster);
  CHECK(other_count.error().pod.shard_count() == 1000);
  CHECK(fmt::format("{}", other_count.error()) ==
        "the pod's shard function `jump-xxh64/1:1000` is not the cluster's `jump-xxh64/1:1024`");

  CHECK_FALSE(check_matches(cluster, ShardFunction::parse("shardcake/1:1024").value()).ok());
  CHECK_FALSE(check_matches(ShardFunction::shardcake_default(), cluster).ok());
}

TEST_CASE("shard_of is jump(xxh64(key, 0), N) for jump-xxh64 and abs(hashCode % N) + 1 for shardcake", "[hashing]") {
  const ShardFunction jump = ShardFunction::jump_xxh64_default();
  const ShardFunction shardcake = ShardFunction::shardcake_default();
  CHECK(jump.shard_of("user:42").value() == 717);  // xxh64 0xDC1FEA7DA8D2D1C2, computed apart
  CHECK(jump.shard_of("").value() == 332);
  CHECK(shardcake.shard_of("hello").value() == 23);
  CHECK(shardcake.shard_of("").value() == 1);  // the empty string hashes to 0
  CHECK(shardcake.shard_of("polygenelubricants").value() == 249);
  CHECK(shardcake.shard_of("\xF0\x9F\x98\x80").value() == 200);  // U+1F600: 1772899 % 300 + 1
  for (int i = 0; i < 1000; ++i) {
    const std::string key = fmt::format("entity/{}", i);
    CHECK(jump.shard_of(key).value() == jump_hash(xxh64(key, 0), 1024));
    CHECK(shardcake.shard_of(key).value() == shardcake_shard(java_string_hash_utf8(key).value(), 300));
  }
}

TEST_CASE("shard_of refuses a key that is not UTF-8 only where the hash needs characters", "[hashing]") {
  const std::string bad = "caf\xE9";  // Latin-1, not UTF-8
  auto shardcake = ShardFunction::shardcake_default().shard_of(bad);
  REQUIRE_FALSE(shardcake.ok());
  CHECK(shardcake.error() == Utf8Error{Utf8ErrorKind::Truncated, 3});
  // jump-xxh64 hashes bytes: any key has a shard.
  CHECK(ShardFunction::jump_xxh64_default().shard_of(bad).ok());
}

TEST_CASE("shard_of stays within [first_shard, last_shard]", "[hashing]") {
  for (const char* text : {"jump-xxh64/1:1", "jump-xxh64/1:7", "shardcake/1:1", "shardcake/1:7"}) {
    const ShardFunction function = ShardFunction::parse(text).value();
    for (int i = 0; i < 2000; ++i) {
      const auto shard = function.shard_of(fmt::format("{}", i)).value();
      INFO(text);
      REQUIRE(shard >= function.first_shard());
      REQUIRE(shard <= function.last_shard());
    }
  }
}
