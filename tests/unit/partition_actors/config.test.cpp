// The partition group's config checks: each problem names the file, the line and the key; a node
// started with a bad value fails before it serves, and a reload with one is refused (the group's
// config checker answers ValidateConfig without creating any partition).
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/actors/partition.hpp>
#include <elfin/actors/partition/config.hpp>
#include <elfin/configurer.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "../config_file_node.hpp"
#include "../temp_dir.hpp"

using namespace elfin;
using elfin::configurer::ReloadConfigs;
using elfin::configurer::ReloadReport;
using elfin::test::from_config_file;
using elfin::test::TempDir;
using elfin::test::with_configurer;
namespace pa = elfin::actors::partition;

TEST_CASE("partition actors: config problems name the file, the line and the key", "[partition_actors]") {
  auto section = AnyConfig::from_toml("nodes = []\nelection_ticks = 1\nsnapshot_every = 0\n", "pod.toml");
  REQUIRE(section);
  auto config = section->decode<pa::Config>();
  REQUIRE(config);
  const auto problems = pa::validate(*config, *section);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].starts_with("pod.toml:1: nodes: required"));
  CHECK(problems[1].starts_with("snapshot_dir: required"));  // not written: no line to name
  CHECK(problems[2] == "pod.toml:2: election_ticks: 1 must be above heartbeat_ticks (1)");
  CHECK(problems[3] == "pod.toml:3: snapshot_every: must be at least 1");
}

TEST_CASE("kv placement: placement is \"nodes\" (which needs nodes) or \"assignment\" (which does not)",
          "[partition_actors]") {
  auto section =
      AnyConfig::from_toml("placement = \"anywhere\"\nreconcile_ticks = 0\nsnapshot_dir = \"s\"\n", "pod.toml");
  REQUIRE(section);
  auto config = section->decode<pa::Config>();
  REQUIRE(config);
  const auto problems = pa::validate(*config, *section);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].starts_with("pod.toml:1: placement: \"anywhere\" is neither"));
  CHECK(problems[1].starts_with("nodes: required"));
  CHECK(problems[2] == "pod.toml:2: reconcile_ticks: must be at least 1");
  pa::Config placed;
  placed.placement = "assignment";
  placed.snapshot_dir = "s";
  CHECK(pa::validate(placed).empty());
}

TEST_CASE("partition actors: a node started with a bad partitions config fails with the key's file and line",
          "[partition_actors]") {
  TempDir dir;
  const auto path = dir.write("pod.toml", "[partitions]\nnodes = [1]\nsnapshot_dir = \"snap\"\nmax_inflight = 0\n");
  auto system = System::start(with_configurer("partitions", pa::blueprint()), from_config_file(path));
  REQUIRE(system.ok());
  REQUIRE(system->join_for(std::chrono::seconds(10)));
  REQUIRE(system->failure().has_value());
  CHECK_THAT(*system->failure(),
             Catch::Contains("[partitions] rejected the config: " + path + ":4: max_inflight: must be at least 1"));
}

TEST_CASE("partition actors: a reload with a bad partitions config is refused with the key's file and line",
          "[partition_actors]") {
  TempDir dir;
  const auto path = dir.write("pod.toml", "[partitions]\nnodes = [1]\nsnapshot_dir = \"snap\"\n");
  auto proxy = testing::proxy(with_configurer("partitions", pa::blueprint()), "partitions", from_config_file(path));
  const Addr configurers = proxy.system().group_addr("system.configurers");

  dir.write("pod.toml", "[partitions]\nnodes = [1, 1]\nsnapshot_dir = \"snap\"\n");
  ReloadReport refused = proxy.request_fallible(ReloadConfigs{}, configurers).value();
  CHECK_FALSE(refused.accepted);
  CHECK_THAT(refused.reason,
             Catch::Contains("[partitions] rejected the config: " + path + ":2: nodes: node 1 is listed twice"));

  dir.write("pod.toml", "[partitions]\nnodes = [1]\nsnapshot_dir = \"snap\"\ntick = \"50ms\"\n");
  ReloadReport accepted = proxy.request_fallible(ReloadConfigs{}, configurers).value();
  CHECK(accepted.accepted);
}
