// The KV front's config checks: each problem names the file, the line and the key; a node started
// with a bad value fails before it serves, and a reload with one is refused and the running config
// stays (the front answers ValidateConfig).
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/actors/kv.hpp>
#include <elfin/actors/kv/config.hpp>
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
namespace akv = elfin::actors::kv;

TEST_CASE("kv: config problems name the file, the line and the key", "[kv]") {
  auto section = AnyConfig::from_toml("nodes = [1, 0, 1]\nrequest_timeout = \"0s\"\nmax_scan_limit = 0\n", "pod.toml");
  REQUIRE(section);
  auto config = section->decode<akv::Config>();
  REQUIRE(config);
  const auto problems = akv::validate(*config, *section);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0] == "pod.toml:1: nodes: 0 is not a node number");
  CHECK(problems[1] == "pod.toml:1: nodes: node 1 is listed twice");
  CHECK(problems[2].starts_with("pod.toml:2: request_timeout: must be positive"));
  CHECK(problems[3] == "pod.toml:3: max_scan_limit: must be at least 1");
  CHECK(akv::validate(akv::Config{.nodes = {1, 2, 3}}).empty());
}

TEST_CASE("kv placement: with a manager the front needs no nodes; without one it does", "[kv]") {
  auto section = AnyConfig::from_toml("manager = true\nregister_retry = \"0s\"\n", "pod.toml");
  REQUIRE(section);
  auto config = section->decode<akv::Config>();
  REQUIRE(config);
  const auto problems = akv::validate(*config, *section);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].starts_with("pod.toml:2: register_retry: must be positive"));
  akv::Config managed;
  managed.manager = true;
  CHECK(akv::validate(managed).empty());
  CHECK_FALSE(akv::validate(akv::Config{}).empty());
}

TEST_CASE("kv: a node started with a bad front config fails with the key's file and line", "[kv]") {
  TempDir dir;
  const auto path = dir.write("pod.toml", "[kv]\nnodes = [1]\nshards = 0\n");
  auto system = System::start(with_configurer("kv", akv::blueprint()), from_config_file(path));
  REQUIRE(system.ok());
  REQUIRE(system->join_for(std::chrono::seconds(10)));
  REQUIRE(system->failure().has_value());
  CHECK_THAT(*system->failure(), Catch::Contains("[kv] rejected the config: " + path + ":3: shards: must be from 1"));
}

TEST_CASE("kv: a reload with a bad front config is refused with the key's file and line", "[kv]") {
  TempDir dir;
  const auto path = dir.write("pod.toml", "[kv]\nnodes = [1]\n");
  auto proxy = testing::proxy(with_configurer("kv", akv::blueprint()), "kv", from_config_file(path));
  const Addr configurers = proxy.system().group_addr("system.configurers");

  dir.write("pod.toml", "[kv]\nnodes = [1]\nretry_interval = \"0ms\"\n");
  ReloadReport refused = proxy.request_fallible(ReloadConfigs{}, configurers).value();
  CHECK_FALSE(refused.accepted);
  CHECK_THAT(refused.reason,
             Catch::Contains("[kv] rejected the config: " + path + ":3: retry_interval: must be positive"));

  dir.write("pod.toml", "[kv]\nnodes = [1]\nretry_interval = \"20ms\"\n");
  ReloadReport accepted = proxy.request_fallible(ReloadConfigs{}, configurers).value();
  CHECK(accepted.accepted);
}
