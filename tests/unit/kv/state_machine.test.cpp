// The KV state machine's commands as protocols/kv defines them (versions, conditional writes,
// prefix scans), its snapshots, and the key -> shard function.
#include <set>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include <elfin/actors/kv.hpp>
#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/protocols/kv/command.hpp>

namespace {

namespace ap = elfin::actors::partition;
namespace pk = elfin::protocols::kv;

pk::KvResponse run(ap::KvStateMachine& kv, std::uint64_t index, pk::KvCommand command) {
  return pk::decode_kv_response(kv.apply(index, pk::encode(command)));
}

pk::KvResponse query(const ap::KvStateMachine& kv, pk::KvCommand command) {
  return pk::decode_kv_response(kv.query(pk::encode(command)));
}

pk::KvCommand scan(std::string prefix, std::uint32_t limit) {
  return {pk::KvOp::Scan, std::move(prefix), {}, 0, limit};
}

}  // namespace

TEST_CASE("kv: a key's version is the log index of its last write, and deletes leave no version", "[kv]") {
  ap::KvStateMachine kv;
  CHECK(run(kv, 3, {pk::KvOp::Put, "a", "1", 0, 0}).version == 3);
  CHECK(run(kv, 9, {pk::KvOp::Put, "a", "2", 0, 0}).version == 9);
  CHECK(query(kv, {pk::KvOp::Get, "a", {}, 0, 0}).version == 9);
  CHECK(run(kv, 10, {pk::KvOp::Delete, "a", {}, 0, 0}).ok);
  const auto gone = query(kv, {pk::KvOp::Get, "a", {}, 0, 0});
  CHECK_FALSE(gone.found);
  CHECK(gone.version == 0);
}

TEST_CASE("kv: delete-if-version deletes only at the expected version and reports the current one", "[kv]") {
  ap::KvStateMachine kv;
  std::ignore = run(kv, 4, {pk::KvOp::Put, "k", "v", 0, 0});
  SECTION("a stale version: refused, with the current version and value") {
    const auto refused = run(kv, 5, {pk::KvOp::DeleteIfVersion, "k", {}, 3, 0});
    CHECK_FALSE(refused.ok);
    CHECK(refused.found);
    CHECK(refused.version == 4);
    CHECK(refused.value == "v");
    CHECK(query(kv, {pk::KvOp::Get, "k", {}, 0, 0}).found);
  }
  SECTION("the current version: deleted, the response names the version deleted") {
    const auto deleted = run(kv, 5, {pk::KvOp::DeleteIfVersion, "k", {}, 4, 0});
    CHECK(deleted.ok);
    CHECK(deleted.version == 4);
    CHECK_FALSE(query(kv, {pk::KvOp::Get, "k", {}, 0, 0}).found);
  }
  SECTION("version 0 matches only a missing key, and deletes nothing") {
    CHECK_FALSE(run(kv, 5, {pk::KvOp::DeleteIfVersion, "k", {}, 0, 0}).ok);
    const auto absent = run(kv, 6, {pk::KvOp::DeleteIfVersion, "other", {}, 0, 0});
    CHECK(absent.ok);
    CHECK(absent.version == 0);
  }
}

TEST_CASE("kv: a prefix scan returns the matching keys in key order, at most limit, and says whether more match",
          "[kv]") {
  ap::KvStateMachine kv;
  std::uint64_t index = 0;
  for (const char* key : {"user:3", "user:1", "users", "user:2", "admin:1", "user;"}) {
    std::ignore = run(kv, ++index, {pk::KvOp::Put, key, std::string("v-") + key, 0, 0});
  }
  const auto all = query(kv, scan("user:", 10));
  REQUIRE(all.entries.size() == 3);
  CHECK(all.entries[0] == pk::KeyValue{"user:1", "v-user:1", 2});
  CHECK(all.entries[1].key == "user:2");
  CHECK(all.entries[2].key == "user:3");
  CHECK_FALSE(all.more);

  const auto two = query(kv, scan("user:", 2));
  REQUIRE(two.entries.size() == 2);
  CHECK(two.entries[1].key == "user:2");
  CHECK(two.more);

  CHECK(query(kv, scan("", 100)).entries.size() == 6);
  CHECK(query(kv, scan("zzz", 5)).entries.empty());
  // A scan proposed through the log answers the same.
  CHECK(run(kv, ++index, scan("user:", 10)) == all);
}

TEST_CASE("kv: a snapshot restores every key with its version, and writes after it continue the versions", "[kv]") {
  ap::KvStateMachine kv;
  for (std::uint64_t i = 1; i <= 40; ++i) {
    std::ignore = run(kv, i, {pk::KvOp::Put, "k" + std::to_string(i % 9), std::to_string(i), 0, 0});
  }
  std::ignore = run(kv, 41, {pk::KvOp::DeleteIfVersion, "k4", {}, 40, 0});
  ap::KvStateMachine copy;
  copy.restore(kv.snapshot());
  CHECK(copy.data() == kv.data());
  CHECK_FALSE(copy.data().contains("k4"));
  CHECK(query(copy, scan("k", 100)) == query(kv, scan("k", 100)));
  // A Cas at the restored version succeeds on the copy exactly as on the original.
  CHECK(run(copy, 42, {pk::KvOp::Cas, "k5", "x", 32, 0}) == run(kv, 42, {pk::KvOp::Cas, "k5", "x", 32, 0}));
  CHECK(query(copy, {pk::KvOp::Get, "k5", {}, 0, 0}).version == 42);
}

TEST_CASE("kv: a key's shard is jump(xxh64(key), 1024), the shard function jump-xxh64/1:1024", "[kv]") {
  const auto function = elfin::hashing::ShardFunction::parse("jump-xxh64/1:1024");
  REQUIRE(function);
  for (const char* key : {"user:42", "a", "", "some longer key with spaces", "\xff\xfe"}) {
    INFO(key);
    const auto expected = function->shard_of(key);
    if (!expected) continue;  // not a string the shard function takes
    CHECK(elfin::actors::kv::shard_of(key) == *expected);
  }
  // Keys spread over the shards.
  std::set<pk::ShardId> seen;
  for (int i = 0; i < 4000; ++i) seen.insert(elfin::actors::kv::shard_of("key" + std::to_string(i)));
  CHECK(seen.size() > 900);
  CHECK(*seen.rbegin() < pk::kShards);
}

TEST_CASE("kv: a write proposed again with the same request id is applied once and answered as the first time",
          "[kv]") {
  ap::KvStateMachine kv;
  pk::KvCommand put{pk::KvOp::Put, "a", "1", 0, 0, 7, 1};
  CHECK(run(kv, 3, put).version == 3);
  CHECK(run(kv, 4, {pk::KvOp::Put, "a", "2", 0, 0, 8, 1}).version == 4);  // another front's write
  // The first attempt's entry committed at 3; the retry's entry at 5 changes nothing and answers
  // version 3 again (without the id check it wrote "1" back over "2", as a second write).
  CHECK(run(kv, 5, put).version == 3);
  const auto now = query(kv, {pk::KvOp::Get, "a", {}, 0, 0});
  CHECK(now.value == "2");
  CHECK(now.version == 4);

  // A delete retried after another write does not delete that write.
  pk::KvCommand del{pk::KvOp::Delete, "a", {}, 0, 0, 7, 2};
  CHECK(run(kv, 6, del).ok);
  CHECK(run(kv, 7, {pk::KvOp::Put, "a", "3", 0, 0, 8, 2}).version == 7);
  CHECK(run(kv, 8, del).ok);  // the first answer (it existed), not a second delete
  CHECK(query(kv, {pk::KvOp::Get, "a", {}, 0, 0}).value == "3");

  // The ids survive a snapshot.
  ap::KvStateMachine restored;
  restored.restore(kv.snapshot());
  CHECK(run(restored, 9, put).version == 3);
  CHECK(query(restored, {pk::KvOp::Get, "a", {}, 0, 0}).version == 7);

  // Without an id every application counts, and an old id is forgotten after kRecentWrites others.
  CHECK(run(kv, 10, {pk::KvOp::Put, "b", "x", 0, 0}).version == 10);
  CHECK(run(kv, 11, {pk::KvOp::Put, "b", "x", 0, 0}).version == 11);
  for (std::uint64_t i = 0; i < ap::KvStateMachine::kRecentWrites; ++i) {
    std::ignore = run(kv, 12 + i, {pk::KvOp::Put, "c", "y", 0, 0, 9, i + 1});
  }
  CHECK(run(kv, 20000, put).version == 20000);
}
