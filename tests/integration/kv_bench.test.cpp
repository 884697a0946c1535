// `elfin kv bench` against a local cluster (`elfin kv cluster start`, three pods on loopback):
// the JSON report's shape, its counts against what the cluster holds afterwards (each of N keys
// written once, then scanned back), and the progress lines and per-kind report of a mixed,
// Zipf-keyed run and of a fixed-rate run.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

/// Few shards keep the cluster's start and the scan over every shard quick.
constexpr const char* kShards = "64";

bool port_free(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

Run elfin_cli(std::vector<std::string> args, std::chrono::seconds timeout = 90s) {
  args.insert(args.begin(), elfin::test::elfin_binary());
  auto process = Process::start(args);
  if (!process) FAIL(process.error());
  auto status = process->wait_exit(timeout);
  if (!status) FAIL(fmt::format("`{}` still runs after {} s", fmt::join(args, " "), timeout.count()));
  return Run{status->signal != 0 ? -1 : status->code, process->stdout_text(), process->stderr_text()};
}

/// Three pods started in a temporary directory, stopped at the end.
class Cluster {
 public:
  Cluster() {
    Run started;
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::uint16_t base = 0;
      for (int i = 0; i < 100 && base == 0; ++i) {
        const std::uint16_t candidate = elfin::test::free_tcp_port();
        if (candidate < 60000 && port_free(candidate + 1) && port_free(candidate + 2)) base = candidate;
      }
      REQUIRE(base != 0);
      started = elfin_cli(
          {"kv", "cluster", "start", "--dir", dir(), "--base-port", std::to_string(base), "--shards", kShards});
      if (started.code == 0 || started.err.find("is taken") == std::string::npos) break;
    }
    INFO(started.out << started.err);
    REQUIRE(started.code == 0);
  }
  ~Cluster() { std::ignore = elfin_cli({"kv", "cluster", "stop", "--dir", dir()}); }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  [[nodiscard]] std::string dir() const { return dir_.path().string(); }
  Run kv(std::vector<std::string> args) {
    args.insert(args.begin(), "kv");
    args.push_back("--dir");
    args.push_back(dir());
    return elfin_cli(std::move(args));
  }

 private:
  TempDir dir_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("kv bench: writes each of N keys once with --sequential, reports N puts in JSON, and the cluster holds them",
          "[integration][kv]") {
  Cluster cluster;
  constexpr int kKeys = 120;
  const Run bench =
      cluster.kv({"bench", "--clients", "3", "--ops", std::to_string(kKeys), "--mix", "0:100", "--sequential", "--keys",
                  std::to_string(kKeys), "--prefix", "seq:", "--value-size", "40", "--node", "700", "--json"});
  INFO(bench.out << bench.err);
  REQUIRE(bench.code == 0);
  const auto report = nlohmann::json::parse(bench.out);
  CHECK(report["bench"]["clients"] == 3);
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
  const Run scan = cluster.kv({"scan", "seq:", "--limit", "1000"});
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
  Cluster cluster;
  const Run mixed = cluster.kv({"bench", "--clients", "2", "--duration", "2", "--mix", "50:40:10", "--zipf", "0.99",
                                "--keys", "50", "--node", "720"});
  INFO(mixed.out << mixed.err);
  REQUIRE(mixed.code == 0);
  CHECK_THAT(mixed.err, Catch::Contains("[   1.0s]") && Catch::Contains("ops/s"));
  CHECK_THAT(mixed.out, Catch::Contains("2 clients, 50 keys zipf 0.99") && Catch::Contains("\nops ") &&
                            Catch::Contains("\nlatency    p50 ") && Catch::Contains("\nget ") &&
                            Catch::Contains("\nput ") && Catch::Contains("\ncas "));

  const Run paced = cluster.kv({"bench", "--clients", "2", "--duration", "2", "--rate", "50", "--mix", "100:0",
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
