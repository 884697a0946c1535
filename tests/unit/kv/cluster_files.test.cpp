// The pod files: services/kv holds what `elfin kv cluster files` writes for the default layout,
// and every pod's topology loads with the blueprints and node selectors the `elfin` command
// registers.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/kv.hpp>
#include <elfin/actors/partition.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/dumper/dumper.hpp>
#include <elfin/kv/cluster.hpp>
#include <elfin/kv/cluster_files.hpp>
#include <elfin/network/network.hpp>
#include <elfin/telemeter/telemeter.hpp>
#include <elfin/topology_file.hpp>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The telemeter and the dumper, as the `elfin` command registers them.
void register_observability(elfin::BlueprintRegistry& registry) {
  std::ignore = registry.add("elfin.telemeter", elfin::telemeter::blueprint());
  std::ignore = registry.add("elfin.dumper", elfin::dumper::blueprint());
}

}  // namespace

TEST_CASE("kv: the services/kv pod files are the ones `elfin kv cluster files` writes for the default layout", "[kv]") {
  const elfin::kv::ClusterLayout layout;
  for (std::uint16_t n = 1; n <= 3; ++n) {
    const std::string dir = std::string(ELFIN_SOURCE_DIR) + "/services/kv/";
    INFO("pod " << n << " (regenerate with: elfin kv cluster files --dir services/kv)");
    CHECK(read(dir + fmt::format("pod-{}.toml", n)) == elfin::kv::pod_topology(layout, n));
    CHECK(read(dir + fmt::format("pod-{}.config.toml", n)) == elfin::kv::pod_config(layout, n));
  }
}

TEST_CASE("kv: a pod's topology mounts the WAL, partition and front groups with both node selectors", "[kv]") {
  elfin::BlueprintRegistry registry;
  elfin::network::register_blueprints(registry);
  register_observability(registry);
  elfin::actors::wal::register_blueprints(registry);
  elfin::actors::partition::register_blueprints(registry);
  elfin::actors::kv::register_blueprints(registry);
  auto file = elfin::parse_topology_file(elfin::kv::pod_topology({}, 2), "pod-2.toml", registry);
  if (!file) FAIL(file.error().message());
  CHECK(file->node_no == 2);
  REQUIRE(file->remote_groups.size() == 2);
  CHECK(file->remote_groups[0].pick == "partitions.peer");
  CHECK(file->remote_groups[0].remote_name == "partitions");
  CHECK(static_cast<bool>(file->remote_groups[0].selector));
  CHECK(file->remote_groups[1].pick == "kv.node");
  CHECK(file->remote_groups[1].remote_name == "kv");

  // Without the KV front registered, the file names what is missing.
  elfin::BlueprintRegistry partial;
  elfin::network::register_blueprints(partial);
  register_observability(partial);
  elfin::actors::wal::register_blueprints(partial);
  elfin::actors::partition::register_blueprints(partial);
  auto refused = elfin::parse_topology_file(elfin::kv::pod_topology({}, 2), "pod-2.toml", partial);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message(), Catch::Contains("unknown blueprint `kv.front`") &&
                                            Catch::Contains("pick: unknown node selector `kv.node`; registered: "
                                                            "partitions.peer"));
}

TEST_CASE("kv placement: with a replication factor the pods register with a manager node and are placed by it",
          "[kv]") {
  elfin::kv::ClusterLayout layout;
  layout.replication_factor = 3;
  elfin::BlueprintRegistry registry;
  elfin::network::register_blueprints(registry);
  register_observability(registry);
  elfin::actors::wal::register_blueprints(registry);
  elfin::actors::partition::register_blueprints(registry);
  elfin::actors::kv::register_blueprints(registry);
  auto file = elfin::parse_topology_file(elfin::kv::pod_topology(layout, 2), "pod-2.toml", registry);
  if (!file) FAIL(file.error().message());
  REQUIRE(file->remote_groups.size() == 3);
  CHECK(file->remote_groups[2].nodes == std::vector<std::uint16_t>{elfin::kv::kManagerNode});
  // Room for pods added later.
  CHECK(file->remote_groups[0].nodes.size() == elfin::kv::kMaxPods);

  const std::string config = elfin::kv::pod_config(layout, 2);
  CHECK_THAT(config, Catch::Contains("placement = \"assignment\"") && Catch::Contains("manager = true") &&
                         Catch::Contains("\"tcp://127.0.0.1:9500\"") && !Catch::Contains("nodes = ["));
  const std::string manager = elfin::kv::manager_config(layout);
  CHECK_THAT(manager, Catch::Contains("listen = [\"tcp://127.0.0.1:9500\"]") &&
                          Catch::Contains("replication_factor = 3") &&
                          Catch::Contains("shard_function = \"jump-xxh64/1:1024\""));
  CHECK_THAT(elfin::kv::manager_topology(layout), Catch::Contains("blueprint = \"sharding.manager\""));
}

TEST_CASE("kv observability: every node mounts a telemeter on its network port + 100 and a dumper in its directory",
          "[kv]") {
  elfin::kv::ClusterLayout layout;
  layout.replication_factor = 3;
  layout.data_dir = "/srv/kv";
  const std::string topology = elfin::kv::pod_topology(layout, 2);
  CHECK_THAT(topology,
             Catch::Contains("blueprint = \"elfin.telemeter\"") && Catch::Contains("blueprint = \"elfin.dumper\""));
  CHECK_THAT(elfin::kv::pod_config(layout, 2), Catch::Contains("[system.telemeters]\nlisten = \"127.0.0.1:9602\"") &&
                                                   Catch::Contains("path = \"/srv/kv/pod-2/pod-2.dump\""));
  CHECK_THAT(elfin::kv::manager_config(layout),
             Catch::Contains("listen = \"127.0.0.1:9600\"") && Catch::Contains("path = \"/srv/kv/manager.dump\""));
  CHECK_THAT(elfin::kv::manager_topology(layout), Catch::Contains("blueprint = \"elfin.telemeter\""));
  // A port chosen at start (the preferred one was taken) replaces it.
  layout.metrics_ports = {0, 41234};
  CHECK_THAT(elfin::kv::pod_config(layout, 2), Catch::Contains("listen = \"127.0.0.1:41234\""));
  CHECK_THAT(elfin::kv::pod_config(layout, 1), Catch::Contains("listen = \"127.0.0.1:9601\""));
  // Nothing is dumped unless asked for (`--dump`): a dump of every message costs throughput.
  CHECK_THAT(elfin::kv::pod_config(layout, 2), Catch::Contains("[common.system.dumping]\ndisabled = true"));
  layout.dumping = true;
  CHECK_THAT(elfin::kv::pod_config(layout, 2), Catch::Contains("[common.system.dumping]\ndisabled = false"));
  CHECK_THAT(elfin::kv::manager_config(layout), Catch::Contains("[common.system.dumping]\ndisabled = false"));
  // A relative data directory: the dump file next to the config file.
  layout.data_dir = "kv-data";
  CHECK_THAT(elfin::kv::pod_config(layout, 3), Catch::Contains("path = \"pod-3.dump\""));
  // Without observability (nodes sharing a process): neither group.
  layout.observability = false;
  CHECK_THAT(elfin::kv::pod_topology(layout, 2),
             !Catch::Contains("elfin.telemeter") && !Catch::Contains("elfin.dumper"));
  CHECK_THAT(elfin::kv::pod_config(layout, 2), !Catch::Contains("system.telemeters"));
}

TEST_CASE("kv: a local cluster's pods share the machine's cores unless told how many workers each runs", "[kv]") {
  elfin::kv::ClusterLayout layout;
  // Not set (the files in services/kv, pods started by hand on machines of their own): one per core.
  CHECK_THAT(elfin::kv::pod_config(layout, 1), !Catch::Contains("[system.runtime]"));
  layout.workers = 1;
  CHECK_THAT(elfin::kv::pod_config(layout, 1), Catch::Contains("[system.runtime]\nworkers = 1\n"));

  elfin::kv::ClusterOptions options;
  options.pods = 3;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(elfin::kv::pod_workers(options) == std::max(1u, cores / 3));
  options.pods = 1;
  CHECK(elfin::kv::pod_workers(options) == cores);
  options.pods = 64;
  CHECK(elfin::kv::pod_workers(options) == std::max(1u, cores / 64));
  options.workers = 5;  // --workers
  CHECK(elfin::kv::pod_workers(options) == 5);
}
