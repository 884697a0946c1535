// `elfin kv bench` against a local cluster (`elfin kv cluster start`, three pods on loopback):
// the JSON report's shape, its counts against what the cluster holds afterwards (each of N keys
// written once, then scanned back), the light nodes the clients share (as the pods' logs saw them
// connect), and the progress lines and per-kind report of a mixed, Zipf-keyed run and of a
// fixed-rate run.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kv_local_cluster.hpp"

using elfin::test::CliRun;
using elfin::test::KvLocalCluster;

namespace {

/// Few shards keep the cluster's start and the scan over every shard quick.
constexpr std::uint32_t kShards = 64;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("kv bench: writes each of N keys once with --sequential, reports N puts in JSON, and the cluster holds them",
          "[integration][kv]") {
  KvLocalCluster cluster({.shards = kShards});
  REQUIRE(cluster.started().code == 0);
  constexpr int kKeys = 120;
  const CliRun bench = cluster.kv({"bench", "--clients", "3", "--light-nodes", "2", "--ops", std::to_string(kKeys),
                                   "--mix", "0:100", "--sequential", "--keys", std::to_string(kKeys), "--prefix",
                                   "seq:", "--value-size", "40", "--node", "700", "--json"});
  INFO(bench.out << bench.err);
  REQUIRE(bench.code == 0);
  const auto report = nlohmann::json::parse(bench.out);
  CHECK(report["bench"]["clients"] == 3);
  CHECK(report["bench"]["light_nodes"] == 2);
  // Three clients over two light nodes: each pod saw nodes 700 and 701 join, and no third.
  for (std::uint16_t pod = 1; pod <= cluster.size(); ++pod) {
    std::ifstream log(fmt::format("{}/pod-{}.log", cluster.dir(), pod));
    const std::string text{std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>()};
    INFO("pod " << pod);
    CHECK_THAT(text, Catch::Contains("connected to node 700 ") && Catch::Contains("connected to node 701 "));
    CHECK_THAT(text, !Catch::Contains("connected to node 702 "));
  }
  CHECK(report["bench"]["key_choice"] == "sequential");
  const auto& result = report["result"];
  CHECK(result["ops"] == kKeys);
  CHECK(result["error_total"] == 0);
  CHECK(result["kinds"]["put"]["ops"] == kKeys);
  CHECK(result["kinds"]["get"]["ops"] == 0);
  CHECK(result["kinds"]["cas"]["ops"] == 0);
  CHECK(result["ops_per_s"].get<double>() > 0);
  const auto& latency = result["kinds"]["put"]["latency_ns"];
  CHECK(latency["p50"].get<std::uint64_t>() > 0);
  CHECK(latency["p50"] <= latency["p99"]);
  CHECK(latency["p99"] <= latency["p999"]);
  CHECK(latency["p999"] <= latency["max"]);

  // What the cluster holds: exactly the keys written, each with a value of the asked size.
  const CliRun scan = cluster.kv({"scan", "seq:", "--limit", "1000"});
  INFO(scan.err);
  REQUIRE(scan.code == 0);
  const auto entries = lines(scan.out);
  REQUIRE(entries.size() == kKeys);
  for (int i = 0; i < kKeys; ++i) {
    const auto& entry = entries[static_cast<std::size_t>(i)];
    CHECK(entry.starts_with(fmt::format("seq:{:08}\t", i)));
    CHECK(entry.size() - entry.rfind('\t') - 1 == 40);
  }
}

TEST_CASE("kv bench: a mixed Zipf run prints progress lines and a report per kind, and a fixed-rate run says the rate",
          "[integration][kv]") {
  KvLocalCluster cluster({.shards = kShards});
  REQUIRE(cluster.started().code == 0);
  const CliRun mixed = cluster.kv({"bench", "--clients", "2", "--duration", "2", "--mix", "50:40:10", "--zipf", "0.99",
                                   "--keys", "50", "--node", "720"});
  INFO(mixed.out << mixed.err);
  REQUIRE(mixed.code == 0);
  CHECK_THAT(mixed.err, Catch::Contains("[   1.0s]") && Catch::Contains("ops/s"));
  CHECK_THAT(mixed.out, Catch::Contains("2 clients over 1 light node, 50 keys zipf 0.99") &&
                            Catch::Contains("\nops ") && Catch::Contains("\nlatency    p50 ") &&
                            Catch::Contains("\nget ") && Catch::Contains("\nput ") && Catch::Contains("\ncas "));

  const CliRun paced = cluster.kv({"bench", "--clients", "2", "--duration", "2", "--rate", "50", "--mix", "100:0",
                                   "--keys", "10", "--node", "740", "--json"});
  INFO(paced.out << paced.err);
  REQUIRE(paced.code == 0);
  const auto report = nlohmann::json::parse(paced.out);
  CHECK(report["result"]["target_rate"] == 50.0);
  // 2 s at 50 ops/s: at most the 100 scheduled operations, and gets only.
  CHECK(report["result"]["ops"].get<int>() + report["result"]["error_total"].get<int>() <= 100);
  CHECK(report["result"]["kinds"]["get"]["ops"].get<int>() > 0);
  CHECK(report["result"]["kinds"]["put"]["ops"] == 0);
}
