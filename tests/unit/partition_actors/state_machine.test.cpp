// The partition group's parts that need no cluster: the KV state machine, snapshot files, and the
// Raft message's wire form.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <msgpack.hpp>

#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/actors/partition/snapshot_file.hpp>
#include <elfin/protocols/raft.hpp>

#include "../temp_dir.hpp"

namespace {

namespace ap = elfin::actors::partition;
namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using elfin::test::TempDir;

pk::KvResponse run(ap::KvStateMachine& kv, std::uint64_t index, pk::KvCommand command) {
  return pk::decode_kv_response(kv.apply(index, pk::encode(command)));
}

pk::KvResponse query(const ap::KvStateMachine& kv, std::string key) {
  return pk::decode_kv_response(kv.query(pk::encode(pk::KvCommand{pk::KvOp::Get, std::move(key), {}, 0})));
}

pr::Snapshot snapshot_at(std::uint64_t index, std::string text) {
  return pr::Snapshot{index, 2, pr::ConfState{{1, 2, 3}, {4}, {}}, pr::Bytes(text.begin(), text.end())};
}

}  // namespace

TEST_CASE("partition actors: the KV state machine versions keys by log index and compare-and-set checks them",
          "[partition_actors]") {
  ap::KvStateMachine kv;
  CHECK(run(kv, 1, {pk::KvOp::Put, "a", "1", 0}) == pk::KvResponse{true, true, "", 1});
  CHECK(query(kv, "a") == pk::KvResponse{true, true, "1", 1});
  CHECK(query(kv, "b") == pk::KvResponse{});
  SECTION("compare-and-set with a stale version fails and reports the current value") {
    CHECK(run(kv, 2, {pk::KvOp::Cas, "a", "2", 7}) == pk::KvResponse{false, true, "1", 1});
    CHECK(query(kv, "a").value == "1");
  }
  SECTION("compare-and-set with the current version writes, and version 0 means absent") {
    CHECK(run(kv, 2, {pk::KvOp::Cas, "a", "2", 1}).ok);
    CHECK(query(kv, "a") == pk::KvResponse{true, true, "2", 2});
    CHECK(run(kv, 3, {pk::KvOp::Cas, "new", "x", 0}).ok);
    CHECK_FALSE(run(kv, 4, {pk::KvOp::Cas, "new", "y", 0}).ok);
  }
  SECTION("delete reports whether the key existed") {
    CHECK(run(kv, 2, {pk::KvOp::Delete, "a", "", 0}).ok);
    CHECK_FALSE(run(kv, 3, {pk::KvOp::Delete, "a", "", 0}).ok);
    CHECK_FALSE(query(kv, "a").found);
  }
}

TEST_CASE("partition actors: a KV snapshot restores the same keys, values and versions", "[partition_actors]") {
  ap::KvStateMachine kv;
  for (std::uint64_t i = 1; i <= 50; ++i)
    std::ignore = run(kv, i, {pk::KvOp::Put, "k" + std::to_string(i % 7), std::to_string(i), 0});
  std::ignore = run(kv, 51, {pk::KvOp::Delete, "k3", "", 0});
  ap::KvStateMachine copy;
  copy.restore(kv.snapshot());
  CHECK(copy.data() == kv.data());
  CHECK(query(copy, "k1") == query(kv, "k1"));
  CHECK_FALSE(query(copy, "k3").found);
  CHECK_THROWS(copy.restore(pr::Bytes{0xc1}));  // 0xc1 is never valid msgpack
}

TEST_CASE("partition actors: snapshot files are written atomically and the newest one loads back",
          "[partition_actors]") {
  TempDir tmp;
  const std::string dir = tmp.file("p7");
  auto none = ap::load_latest_snapshot(dir);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  REQUIRE(ap::write_snapshot(dir, snapshot_at(10, "ten")));
  auto second = ap::write_snapshot(dir, snapshot_at(20, "twenty"));
  REQUIRE(second);
  // A write that died before its rename leaves a temporary, never a file with a snapshot's name.
  {
    std::ofstream temp(dir + "/snapshot-0000000000000030-0000000000000002.snap.tmp");
    temp << "half";
  }
  auto loaded = ap::load_latest_snapshot(dir);
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  CHECK(**loaded == snapshot_at(20, "twenty"));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    CHECK(entry.path().extension() == ".snap");  // the older snapshot and the temporary are gone
  }
  CHECK(files == 1);

  SECTION("a damaged newest snapshot is an error naming the file, not a silent fallback") {
    {
      std::fstream file(*second, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(30);
      file.put('\x7f');
    }
    auto damaged = ap::load_latest_snapshot(dir);
    REQUIRE_FALSE(damaged);
    CHECK_THAT(damaged.error(), Catch::Contains("snapshot-0000000000000014") && Catch::Contains("CRC"));
  }
}

TEST_CASE("partition actors: a Raft message keeps every field through msgpack and tolerates unknown types",
          "[partition_actors]") {
  pr::RaftMessage m;
  m.partition = 9;
  m.type = pr::MessageType::Append;
  m.from = 1;
  m.to = 3;
  m.term = 4;
  m.log_term = 3;
  m.index = 11;
  m.entries = {pr::Entry{4, 12, pr::EntryKind::Normal, {1, 2}}, pr::Entry{4, 13, pr::EntryKind::ConfChange, {3}}};
  m.commit = 10;
  m.snapshot = snapshot_at(5, "five");
  m.context = {9, 9};
  m.quiesce = true;
  m.periodic = true;
  m.beats = {pr::Beat{7, pr::MessageType::Heartbeat, 4, 120, 10, {}, true},
             pr::Beat{8, pr::MessageType::HeartbeatResponse, 2, 119, 0, {5}, false}};
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, m);
  auto decoded = msgpack::unpack(buffer.data(), buffer.size()).get().as<pr::RaftMessage>();
  CHECK(decoded.partition == 9);
  CHECK(decoded.type == pr::MessageType::Append);
  CHECK(decoded.entries == m.entries);
  CHECK(decoded.snapshot == m.snapshot);
  CHECK(decoded.context == m.context);
  CHECK(decoded.commit == 10);
  CHECK(decoded.quiesce);
  CHECK(decoded.periodic);
  CHECK(decoded.beats == m.beats);

  // A newer peer's message type decodes to Unknown (and is dropped by the actor), not an error.
  msgpack::sbuffer newer;
  msgpack::packer<msgpack::sbuffer> packer(newer);
  packer.pack_map(7);
  packer.pack("partition");
  packer.pack(1);
  packer.pack("type");
  packer.pack("CoalescedHeartbeat");
  packer.pack("from");
  packer.pack(1);
  packer.pack("to");
  packer.pack(2);
  packer.pack("term");
  packer.pack(1);
  packer.pack("log_term");
  packer.pack(0);
  packer.pack("index");
  packer.pack(0);
  auto unknown = msgpack::unpack(newer.data(), newer.size()).get().as<pr::RaftMessage>();
  CHECK(unknown.type == pr::MessageType::Unknown);
  CHECK_FALSE(unknown.quiesce);  // a peer without quiescence never asks for it
  CHECK(unknown.beats.empty());  // nor one without coalesced heartbeats sends any
}
