// The sharding protocol on the wire: every message crosses msgpack with named fields and comes
// back equal, typed errors included, so pods and the manager may run on different nodes.
#include <string>

#include <catch2/catch.hpp>
#include <msgpack.hpp>

#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>

using namespace elfin::protocols::sharding;

namespace {

template <class T>
T round_trip(const T& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  auto handle = msgpack::unpack(buffer.data(), buffer.size());
  return handle.get().as<T>();
}

template <class T>
std::string keys_of(const T& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  auto handle = msgpack::unpack(buffer.data(), buffer.size());
  const auto& object = handle.get();
  REQUIRE(object.type == msgpack::type::MAP);
  std::string keys;
  for (std::uint32_t i = 0; i < object.via.map.size; ++i) {
    keys += object.via.map.ptr[i].key.as<std::string>();
    keys += ' ';
  }
  return keys;
}

Assignments sample() {
  Assignments a;
  a.epoch = 7;
  a.shard_function = "shardcake/1:4";
  a.first_shard = 1;
  a.pods = {{{"10.0.0.1:54321", 3}, 0x0001000200000005, "1.2.0"}, {{"10.0.0.2:54321", 1}, 9, "1.2.0"}};
  a.owners = {0, 1, -1, 0};
  return a;
}

}  // namespace

TEST_CASE("shard manager: the sharding protocol's messages cross msgpack by field name", "[shard_manager]") {
  const Register reg{{"10.0.0.1:54321", 3}, 42, "1.2.0", "jump-xxh64/1:1024"};
  const auto back = round_trip(reg);
  CHECK(back.pod == reg.pod);
  CHECK(back.endpoint == 42);
  CHECK(back.version == "1.2.0");
  CHECK(back.shard_function == "jump-xxh64/1:1024");
  CHECK(keys_of(reg) == "pod endpoint version shard_function ");

  const AssignShards assign{{"a:1", 2}, {1, 2, 3}, 9};
  CHECK(round_trip(assign).shards == assign.shards);
  CHECK(round_trip(assign).epoch == 9);
  CHECK(keys_of(assign) == "pod shards epoch ");
  const UnassignShards unassign{{"a:1", 2}, {4}, 8};
  CHECK(round_trip(unassign).pod == unassign.pod);
  CHECK(keys_of(PingPod{{"a:1", 2}}) == "pod ");
  CHECK(keys_of(ReportUnhealthyPod{{"a:1", 2}, {"b:1", 1}}) == "pod reporter ");

  const AssignmentsChanged changed{sample()};
  CHECK(round_trip(changed).assignments == sample());
}

TEST_CASE("shard manager: an assignment map answers owner and shards_of from its compact form", "[shard_manager]") {
  const auto a = sample();
  REQUIRE(a.owner(1));
  CHECK(a.owner(1)->pod == PodRef{"10.0.0.1:54321", 3});
  CHECK(a.owner(2)->pod == PodRef{"10.0.0.2:54321", 1});
  CHECK_FALSE(a.owner(3));  // unassigned
  CHECK_FALSE(a.owner(0));  // below the first shard
  CHECK_FALSE(a.owner(5));  // above the last
  CHECK(a.shards_of(PodRef{"10.0.0.1:54321", 3}) == std::vector<std::uint32_t>{1, 4});
  CHECK(a.shards_of(PodRef{"10.0.0.1:54321", 4}).empty());  // another incarnation owns nothing
}

TEST_CASE("shard manager: typed errors cross with their kind, detail and owner hint", "[shard_manager]") {
  ShardingError error{ShardingErrorKind::NotOwner, "shard 5 is not mine",
                      NotOwner{5, 12, PodEntry{{"10.0.0.2:54321", 1}, 9, "1.2.0"}}};
  const auto back = round_trip(error);
  CHECK(back == error);
  CHECK(fmt::format("{}", back) == "not the owner of the shard: shard 5 is not mine");
  // The kind travels by name, so a newer peer's kinds reach an older one as Other.
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, error);
  CHECK(std::string_view(buffer.data(), buffer.size()).find("NotOwner") != std::string_view::npos);
}
