// bench_sharding_kill: how long a cluster of real processes takes to place the shards of a pod
// killed with SIGKILL.
//
//   kill_to_reassigned_3_pods   a shard manager node (services/shard_manager/manager.toml) and three
//                      pod nodes (services/sharding_pod/pod.toml), each an `elfin run` process on
//                      loopback, 1024 shards; once the three hold shards, one pod is killed with
//                      SIGKILL. Timed from just before the kill to the time stamp of the manager's
//                      log line saying the round that left 2 pods and no unassigned shard is done:
//                      the loss seen on the connection, the health check (ping_timeout 300 ms,
//                      health_check_interval 500 ms), the removal saved, the round (pings, the map
//                      saved, assigns). ops = reassignments
//
// Log time stamps have millisecond resolution. There is no peer (caf_ops_per_s=n/a). Start-up and
// the first balancing are not timed.
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "process.hpp"
#include "shard_manager_node.hpp"
#include "temp_dir.hpp"

namespace {

using elfin::test::Process;
using elfin::test::TempDir;
using elfin_bench::Figure;
using elfin_bench::Options;
using namespace std::chrono_literals;

constexpr std::string_view kBench = "sharding_kill";
constexpr auto kTimeout = 60s;

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A pod node from the shipped topology, as node `no` with its own config.
Process start_pod(const TempDir& dir, int no, std::uint16_t manager_port) {
  const std::uint16_t port = elfin::test::free_tcp_port();
  std::string topology = read_text(elfin::test::source_dir() / "services" / "sharding_pod" / "pod.toml");
  topology = std::regex_replace(topology, std::regex("\nno = 1\n"), fmt::format("\nno = {}\n", no));
  topology = std::regex_replace(topology, std::regex("name = \"pod-1\""), fmt::format("name = \"pod-{}\"", no));
  topology =
      std::regex_replace(topology, std::regex("\"pod\\.config\\.toml\""), fmt::format("\"pod{}.config.toml\"", no));
  dir.write(fmt::format("pod{}.config.toml", no), fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
discovery.predefined = ["tcp://127.0.0.1:{}"]
discovery.attempt_interval = "200ms"

[sharding.pod]
address = "127.0.0.1:{}"
shard_function = "jump-xxh64/1:1024"
retry_interval = "100ms"
refresh_interval = "200ms"
)",
                                                              port, manager_port, port));
  const auto file = dir.write(fmt::format("pod{}.toml", no), topology);
  auto started = Process::start({elfin::test::elfin_binary(), "run", file},
                                {.log_dir = dir.path(), .name = fmt::format("pod{}", no)});
  if (!started) throw std::runtime_error(started.error());
  if (!started->wait_for_output(std::regex("listening on tcp://"), kTimeout)) {
    throw std::runtime_error("a pod is not listening: " + started->output());
  }
  return std::move(started.value());
}

/// The time stamp of the first line `pattern` matches after `since` (group 1: "YYYY-MM-DDTHH:MM:SS.mmm").
std::optional<std::chrono::system_clock::time_point> stamped(const Process& process, const std::regex& pattern,
                                                             elfin::test::OutputMark since) {
  const std::string text = process.output(since);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  std::tm tm{};
  int millis = 0;
  if (std::sscanf(match[1].str().c_str(), "%d-%d-%dT%d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(::timegm(&tm)) + std::chrono::milliseconds{millis};
}

Figure kill_to_reassigned() {
  TempDir dir;
  auto manager = elfin::test::start_shard_manager(
      dir,
      [&](std::uint16_t port) {
        return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]

[sharding.manager]
shard_function = "jump-xxh64/1:1024"
rebalance_interval = "200ms"
rebalance_retry_interval = "200ms"
rebalance_rate = 1.0
ping_timeout = "300ms"
health_check_interval = "500ms"
storage.path = "{}"
)",
                           port, dir.file("shards.state"));
      },
      kTimeout);
  std::vector<Process> pods;
  for (int no = 1; no <= 3; ++no) pods.push_back(start_pod(dir, no, manager.port));
  const std::regex three(R"(shard manager: round [0-9]+ done in [^\n]*: epoch [0-9]+, 3 pods, 0 unassigned)");
  if (!manager.process.wait_for_output(three, kTimeout)) {
    throw std::runtime_error("the three pods were never given shards: " + manager.process.output());
  }
  const auto mark = manager.process.mark();
  const auto t0 = std::chrono::system_clock::now();
  if (!pods[1].kill()) throw std::runtime_error("cannot kill pod 2");
  const std::regex two(
      R"(([0-9-]+T[0-9:.]+)Z [^\n]*shard manager: round [0-9]+ done in [^\n]*: epoch [0-9]+, 2 pods, 0 unassigned)");
  if (!manager.process.wait_for_output(two, kTimeout, mark)) {
    throw std::runtime_error("pod 2's shards were not placed: " + manager.process.output(mark));
  }
  const auto t1 = stamped(manager.process, two, mark);
  if (!t1) throw std::runtime_error("no time stamp in: " + manager.process.output(mark));
  return {std::chrono::duration<double>(*t1 - t0).count(), 1};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<elfin_bench::Case> cases;
  cases.push_back({"kill_to_reassigned_3_pods", "kill", [](const Options& o) {
                     return elfin_bench::run_case(
                         kBench, "kill_to_reassigned_3_pods", o, [] { return kill_to_reassigned(); }, {},
                         " shards=1024 ping_timeout=300ms health_check_interval=500ms storage=file");
                   }});
  return elfin_bench::run_main(kBench, std::move(cases), argc, argv);
}
