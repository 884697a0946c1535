// Pods as real nodes: a shard manager node and pod nodes, each an `elfin run` process on loopback,
// the live map read with `elfin shard --assignments`. Shards follow an added pod, a pod stopped
// gracefully (at once) and a pod killed with SIGKILL (after the manager's health check).
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "process.hpp"
#include "shard_manager_node.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

constexpr auto kTimeout = 30s;
constexpr int kShards = 24;
const std::regex& listening() {
  static const std::regex pattern("listening on tcp://127\\.0\\.0\\.1:[0-9]+");
  return pattern;
}

/// The manager node users run, with fast rounds and health checks.
elfin::test::ShardManagerNode start_manager(TempDir& dir) {
  return elfin::test::start_shard_manager(
      dir,
      [&](std::uint16_t port) {
        return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
secret = "s3cret"

[sharding.manager]
shard_function = "jump-xxh64/1:{}"
rebalance_interval = "200ms"
rebalance_retry_interval = "200ms"
rebalance_rate = 1.0
ping_timeout = "300ms"
health_check_interval = "500ms"
storage.path = "{}"
)",
                           port, kShards, dir.file("shards.state"));
      },
      kTimeout);
}

Process start_pod(TempDir& dir, int no, std::uint16_t manager_port) {
  const std::uint16_t port = elfin::test::free_tcp_port();
  dir.write(fmt::format("pod{}.config.toml", no), fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
discovery.predefined = ["tcp://127.0.0.1:{}"]
discovery.attempt_interval = "200ms"
secret = "s3cret"

[sharding.pod]
address = "127.0.0.1:{}"
shard_function = "jump-xxh64/1:{}"
retry_interval = "100ms"
refresh_interval = "200ms"
)",
                                                              port, manager_port, port, kShards));
  const auto topology = dir.write(fmt::format("pod{}.toml", no), fmt::format(R"([node]
no = {}
name = "pod-{}"
config = "pod{}.config.toml"

[[groups]]
name = "system.network"
blueprint = "elfin.network"

[[groups]]
name = "sharding.pod"
blueprint = "sharding.pod"

[[remote]]
name = "sharding.manager"
nodes = [100]

[[routes]]
from = "sharding.pod"
to = "sharding.manager"
messages = ["sharding.*"]
)",
                                                                             no, no, no));
  auto started = Process::start({elfin::test::elfin_binary(), "run", topology},
                                {.log_dir = dir.path(), .name = fmt::format("pod{}", no)});
  if (!started) throw std::runtime_error(started.error());
  if (!started->wait_for_output(listening(), kTimeout)) throw std::runtime_error("not listening: " + started->output());
  return std::move(started.value());
}

/// Shards per pod address in the manager's live map (empty if it could not be read).
std::map<std::string, int> shards_per_pod(TempDir& dir, std::uint16_t manager_port) {
  auto asked = Process::start({elfin::test::elfin_binary(), "shard", "--assignments", "--manager",
                               fmt::format("tcp://127.0.0.1:{}", manager_port), "--secret", "s3cret", "--timeout", "5"},
                              {.log_dir = dir.path(), .name = "asked"});
  std::map<std::string, int> shards;
  if (!asked) return shards;
  const auto status = asked->wait_exit(kTimeout);
  if (!status || status->code != 0) return shards;
  std::istringstream lines(asked->stdout_text());
  const std::regex pod_line("^([0-9.:]+)#[0-9]+\tv[^\t]*\t([0-9]+) shards");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, pod_line)) shards[match[1].str()] = std::stoi(match[2].str());
  }
  return shards;
}

/// Polls the live map until every listed pod holds `per_pod` shards and there are `pods` of them.
bool map_becomes(TempDir& dir, std::uint16_t manager_port, std::size_t pods, int per_pod) {
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto shards = shards_per_pod(dir, manager_port);
    bool ok = shards.size() == pods;
    for (const auto& [pod, n] : shards) ok = ok && n == per_pod;
    if (ok) return true;
    std::this_thread::sleep_for(50ms);  // polling another process's state, with a deadline
  }
  return false;
}

}  // namespace

TEST_CASE("sharding pods: shards follow a pod of elfin run that joins, one stopped gracefully and one killed",
          "[integration]") {
  TempDir dir;
  auto manager_node = start_manager(dir);
  const std::uint16_t manager_port = manager_node.port;
  auto& manager = manager_node.process;

  auto pod1 = start_pod(dir, 1, manager_port);
  auto pod2 = start_pod(dir, 2, manager_port);
  CHECK(map_becomes(dir, manager_port, 2, kShards / 2));

  // Add a pod: the regular rounds give it its share.
  auto pod3 = start_pod(dir, 3, manager_port);
  CHECK(map_becomes(dir, manager_port, 3, kShards / 3));

  // Stop it gracefully: it unregisters, and its shards go back to the other two at once.
  REQUIRE(pod3.signal(SIGTERM));
  const auto stopped = pod3.wait_exit(kTimeout);
  REQUIRE(stopped);
  CHECK(pod3.output().find("stopping: refusing new entities") != std::string::npos);
  CHECK(map_becomes(dir, manager_port, 2, kShards / 2));

  // Kill one with SIGKILL: no unregister; the manager's health check finds it dead.
  REQUIRE(pod2.kill());
  INFO(manager.output());
  CHECK(map_becomes(dir, manager_port, 1, kShards));
}
