// The KV service's observability as an operator uses it: `elfin kv cluster start` mounts a
// telemeter and a dumper on every node, so each pod serves Prometheus /metrics on the port
// DIR/metrics names, and a put is followed across the pods' dump files with `elfin dump --trace`
// (the trace id travels with the messages over the network battery). Real `elfin run` processes on
// loopback, free ports.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../unit/eventually.hpp"
#include "kv_local_cluster.hpp"
#include "prometheus_process.hpp"

using namespace std::chrono_literals;
using elfin::test::eventually;

namespace {

constexpr std::uint32_t kShards = 16;

class PlacedCluster : public elfin::test::KvLocalCluster {
 public:
  PlacedCluster() : KvLocalCluster({.pods = 3, .shards = kShards, .replication_factor = 3, .dump = true}) {
    INFO(started().out << started().err);
    REQUIRE(started().code == 0);
  }
};

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// DIR/metrics: node name ("pod-N", "manager") -> telemeter port.
std::map<std::string, unsigned short> metrics_ports(const std::string& dir) {
  std::map<std::string, unsigned short> out;
  std::istringstream lines(text_of(dir + "/metrics"));
  for (std::string name, address; lines >> name >> address;) {
    out[name] = static_cast<unsigned short>(std::stoul(address.substr(address.rfind(':') + 1)));
  }
  return out;
}

std::string dump_file(const std::string& dir, int pod) { return fmt::format("{}/pod-{}/pod-{}.dump", dir, pod, pod); }

/// The trace id of the kv.Put whose value is `value`, as the front that took it dumped it (0: not
/// in any pod's dump file yet).
std::uint64_t trace_of_put(const std::string& dir, const std::string& value) {
  for (int pod = 1; pod <= 3; ++pod) {
    std::istringstream lines(text_of(dump_file(dir, pod)));
    for (std::string line; std::getline(lines, line);) {
      if (line.find(value) == std::string::npos) continue;
      const auto record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded() || record.value("mp", "") != "kv" || record.value("mn", "") != "Put") continue;
      if (record.value("d", "") == "In") return record.at("t").get<std::uint64_t>();
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("kv observability: a put on a 3-pod RF3 cluster is found by its trace id in the dumps of several pods",
          "[integration][kv]") {
  PlacedCluster cluster;
  auto client = elfin::test::kv_client(cluster.pods(), 60031);
  if (!client) FAIL(client.error());
  const std::string value = "traced-value-7c1e";
  const auto written = client->put("trace:key", value);
  INFO((written ? std::string{} : elfin::protocols::kv::to_string(written.error())));
  REQUIRE(written);

  // The front that took the client's request dumped it (the dumper writes every 500 ms).
  std::uint64_t trace = 0;
  REQUIRE(eventually([&] { return (trace = trace_of_put(cluster.dir(), value)) != 0; }, 20s));
  INFO("trace id " << trace);

  // `elfin dump --trace` on each pod's file: the put's request, the shard request to the leader's
  // front and the Raft appends to the followers carry the same trace id from pod to pod.
  std::set<int> pods_with_trace;
  std::map<int, std::string> printed;
  const auto look = [&] {
    for (int pod = 1; pod <= 3; ++pod) {
      const auto run =
          elfin::test::elfin_cli({"dump", dump_file(cluster.dir(), pod), "--trace", std::to_string(trace)});
      printed[pod] = run.out + run.err;
      if (run.code == 0 && run.out.find(fmt::format("{}", trace)) != std::string::npos) pods_with_trace.insert(pod);
    }
    return pods_with_trace.size() >= 2;
  };
  const bool several = eventually(look, 20s);
  for (const auto& [pod, text] : printed) UNSCOPED_INFO("pod " << pod << ":\n" << text.substr(0, 3000));
  CHECK(several);
  WARN("the put's trace id " << trace << " is in the dumps of " << pods_with_trace.size() << " of 3 pods");

  // Merged, the pods' files show the path of the put in time order: the client's request at a
  // front, its proposal to the shard's leader and, across the pods, the shard request to the
  // leader's front or the leader's appends to its followers.
  std::set<std::string> messages;
  std::set<int> nodes;
  std::string merged_out;
  const auto merged_path = [&] {
    const auto merged =
        elfin::test::elfin_cli({"dump", dump_file(cluster.dir(), 1), dump_file(cluster.dir(), 2),
                                dump_file(cluster.dir(), 3), "--trace", std::to_string(trace), "--json"});
    merged_out = merged.out;
    messages.clear();
    nodes.clear();
    std::istringstream lines(merged.out);
    for (std::string line; std::getline(lines, line);) {
      const auto record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded() || !record.is_object() || record.value("t", std::uint64_t{0}) != trace) continue;
      messages.insert(record.value("mp", "") + "." + record.value("mn", ""));
      nodes.insert(record.value("n", 0));
    }
    return merged.code == 0 && messages.count("kv.Put") == 1 && messages.count("raft.Propose") == 1 &&
           (messages.count("kv.ShardRequest") == 1 || messages.count("raft.RaftMessage") == 1) && nodes.size() >= 2;
  };
  const bool path = eventually(merged_path, 20s);
  INFO(merged_out.substr(0, 4000));
  CHECK(path);
  std::string seen;
  for (const auto& m : messages) seen += m + " ";
  WARN("messages with the put's trace id: " << seen);
}

TEST_CASE("kv observability: every pod and the manager serve /metrics on the port DIR/metrics names",
          "[integration][kv]") {
  PlacedCluster cluster;
  const auto ports = metrics_ports(cluster.dir());
  REQUIRE(ports.size() == 4);
  REQUIRE(ports.count("manager") == 1);
  for (int pod = 1; pod <= 3; ++pod) {
    const std::string name = fmt::format("pod-{}", pod);
    REQUIRE(ports.count(name) == 1);
    // `kv cluster start` printed the same address.
    CHECK_THAT(cluster.started().out,
               Catch::Contains(fmt::format("metrics http://127.0.0.1:{}/metrics", ports.at(name))));
  }
  // Prometheus's file_sd_configs take the same targets.
  const auto targets = nlohmann::json::parse(text_of(cluster.dir() + "/prometheus-targets.json"), nullptr, false);
  REQUIRE(targets.is_array());
  CHECK(targets.size() == 4);

  auto client = elfin::test::kv_client(cluster.pods(), 60032);
  if (!client) FAIL(client.error());
  REQUIRE(client->put("metrics:key", "v"));

  for (int pod = 1; pod <= 3; ++pod) {
    INFO("pod " << pod);
    std::string body;
    // The runtime's series for the pod's groups, and the partitions' WAL requests once a put went through.
    CHECK(eventually(
        [&] {
          body = elfin::integration::http_get(ports.at(fmt::format("pod-{}", pod)), "/metrics").value_or("");
          return body.find("elfin_request_time_seconds_bucket{actor_group=\"partitions\"") != std::string::npos;
        },
        20s));
    INFO(body.substr(0, 3000));
    CHECK_THAT(body, Catch::Contains("# HELP elfin_active_actors") &&
                         Catch::Contains("elfin_active_actors{actor_group=\"wal\"") &&
                         Catch::Contains("elfin_active_actors{actor_group=\"kv\"") &&
                         Catch::Contains("elfin_restarts_total{actor_group=\"partitions\"") &&
                         Catch::Contains("elfin_message_handling_time_seconds"));
  }
  const auto manager = elfin::integration::http_get(ports.at("manager"), "/metrics");
  REQUIRE(manager);
  CHECK_THAT(*manager, Catch::Contains("elfin_shard_manager_pods") &&
                           Catch::Contains("elfin_shard_manager_under_replicated_shards"));
}
