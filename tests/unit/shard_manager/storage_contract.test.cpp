// The storage contract (storage.hpp), run the same way against both implementations: a file in a
// temporary directory, and a Redis server the test starts on a free loopback port.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <hiredis.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager/file_storage.hpp>
#include <elfin/actors/shard_manager/redis_storage.hpp>

#include "../temp_dir.hpp"
#include "redis_server.hpp"

using elfin::actors::shard_manager::AssignmentStorage;
using elfin::actors::shard_manager::StorageErrorKind;
using elfin::actors::shard_manager::StoredState;

namespace {

StoredState state(std::uint64_t revision, std::uint64_t epoch, std::int32_t owner) {
  StoredState s;
  s.revision = revision;
  s.assignments.epoch = epoch;
  s.assignments.shard_function = "jump-xxh64/1:4";
  s.assignments.first_shard = 0;
  s.assignments.pods = {{{"10.0.0.1:1", 7}, 42, "1.0.0"}, {{"10.0.0.2:1", 9}, 43, "1.1.0"}};
  s.assignments.owners = {owner, owner, -1, 1};
  return s;
}

/// The contract, whatever the backend.
void check_contract(AssignmentStorage& storage) {
  SECTION("an empty store loads as nothing") {
    auto loaded = storage.load();
    REQUIRE(loaded);
    CHECK_FALSE(loaded->has_value());
  }
  SECTION("a save loads back whole") {
    REQUIRE(storage.save(state(1, 3, 0)));
    auto loaded = storage.load();
    REQUIRE(loaded);
    REQUIRE(loaded->has_value());
    CHECK(**loaded == state(1, 3, 0));
  }
  SECTION("a higher revision replaces the state") {
    REQUIRE(storage.save(state(1, 3, 0)));
    REQUIRE(storage.save(state(2, 4, 1)));
    auto loaded = storage.load();
    REQUIRE(loaded);
    CHECK(**loaded == state(2, 4, 1));
  }
  SECTION("the same or a lower revision is a conflict and changes nothing") {
    REQUIRE(storage.save(state(5, 3, 0)));
    auto same = storage.save(state(5, 9, 1));
    REQUIRE_FALSE(same);
    CHECK(same.error().kind == StorageErrorKind::Conflict);
    auto lower = storage.save(state(4, 9, 1));
    REQUIRE_FALSE(lower);
    CHECK(lower.error().kind == StorageErrorKind::Conflict);
    auto loaded = storage.load();
    REQUIRE(loaded);
    CHECK(**loaded == state(5, 3, 0));
  }
  SECTION("two handles on one store see each other's saves and fence each other") {
    REQUIRE(storage.save(state(1, 1, 0)));
    REQUIRE(storage.save(state(2, 2, 1)));
    auto loaded = storage.load();
    REQUIRE(loaded);
    CHECK((*loaded)->revision == 2);
  }
}

}  // namespace

TEST_CASE("shard manager storage: the contract holds for the file", "[shard_manager][storage]") {
  elfin::test::TempDir dir;
  elfin::actors::shard_manager::FileStorage storage(dir.file("shards.state"));
  check_contract(storage);
  // Saving leaves no temporary file behind.
  CHECK_FALSE(std::filesystem::exists(dir.file("shards.state.tmp")));
}

TEST_CASE("shard manager storage: the contract holds for Redis", "[shard_manager][storage]") {
  elfin::test::RedisServer server;
  elfin::actors::shard_manager::RedisOptions options;
  options.port = server.port();
  options.key = "test:sharding";
  elfin::actors::shard_manager::RedisStorage storage(options);
  check_contract(storage);
}

TEST_CASE("shard manager storage: a damaged file is Corrupt and is not overwritten", "[shard_manager][storage]") {
  elfin::test::TempDir dir;
  const auto path = dir.write("shards.state", "ELFINSM1\xc1garbage");
  elfin::actors::shard_manager::FileStorage storage(path);
  auto loaded = storage.load();
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().kind == StorageErrorKind::Corrupt);
  CHECK_FALSE(storage.save(state(1, 1, 0)));
  CHECK(elfin::test::read_file(path) == "ELFINSM1\xc1garbage");

  const auto other = dir.write("other.state", "not ours");
  auto foreign = elfin::actors::shard_manager::FileStorage(other).load();
  REQUIRE_FALSE(foreign);
  CHECK(foreign.error().kind == StorageErrorKind::Corrupt);
}

TEST_CASE("shard manager storage: damaged Redis data is Corrupt", "[shard_manager][storage]") {
  elfin::test::RedisServer server;
  redisContext* c = redisConnect("127.0.0.1", server.port());
  REQUIRE(c != nullptr);
  auto* reply = static_cast<redisReply*>(redisCommand(c, "HSET test:bad revision 3 state %s", "\xc1\xc1"));
  REQUIRE(reply != nullptr);
  freeReplyObject(reply);
  redisFree(c);
  elfin::actors::shard_manager::RedisOptions options;
  options.port = server.port();
  options.key = "test:bad";
  elfin::actors::shard_manager::RedisStorage storage(options);
  auto loaded = storage.load();
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().kind == StorageErrorKind::Corrupt);
}

TEST_CASE("shard manager storage: Redis going away is Unavailable, and a new server is used when it is back",
          "[shard_manager][storage]") {
  auto server = std::make_unique<elfin::test::RedisServer>();
  elfin::actors::shard_manager::RedisOptions options;
  options.port = server->port();
  options.timeout = std::chrono::milliseconds(500);
  elfin::actors::shard_manager::RedisStorage storage(options);
  REQUIRE(storage.save(state(1, 1, 0)));
  server->stop();
  auto down = storage.save(state(2, 2, 0));
  REQUIRE_FALSE(down);
  CHECK(down.error().kind == StorageErrorKind::Unavailable);
  auto unreadable = storage.load();
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().kind == StorageErrorKind::Unavailable);
}
