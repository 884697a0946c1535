// Pods as real nodes: a shard manager node and pod nodes, each an `elfin run` process on loopback,
// the live map read with `elfin shard --assignments`. Shards follow an added pod, a pod stopped
// gracefully (at once) and a pod killed with SIGKILL (after the manager's health check); and under
// continuous traffic to sharded entities (elfin_sharding_test_node, see sharding_node/main.cpp), a
// pod killed with SIGKILL loses its shards to the others while no entity ever has two live owners
// (each entity's flock-held owner token) and every entity answers again — with the manager's map
// in a file and in Redis.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "eventually.hpp"
#include "process.hpp"
#include "shard_manager/redis_server.hpp"
#include "shard_manager_node.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::eventually;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

constexpr auto kTimeout = 30s;
constexpr auto kPoll = 50ms;  // the map and the pods' output belong to other processes
constexpr int kShards = 24;
const std::regex& listening() {
  static const std::regex pattern("listening on tcp://127\\.0\\.0\\.1:[0-9]+");
  return pattern;
}

/// The manager node users run, with fast rounds and health checks; `storage` is its
/// `storage.*` keys (default: a file in `dir`).
elfin::test::ShardManagerNode start_manager(TempDir& dir, std::string storage = {}) {
  if (storage.empty()) storage = fmt::format("storage.path = \"{}\"", dir.file("shards.state"));
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
{}
)",
                           port, kShards, storage);
      },
      kTimeout);
}

/// What a pod node has besides its network and its pod, and where it runs.
struct PodExtras {
  std::string binary = elfin::test::elfin_binary();
  std::uint16_t port = 0;            ///< where it listens; 0: a free port
  std::vector<std::uint16_t> peers;  ///< nodes it dials besides the manager's
  std::string config;                ///< appended to its config
  std::string topology;              ///< appended to its topology
  std::string name = "pod";          ///< its files' prefix
  std::string version = "1.0.0";     ///< the software version its pod registers with
};

/// A pod node (`elfin run`): `system.network`, `sharding.pod` routed to the manager node, and `extras`.
Process start_pod(TempDir& dir, int no, std::uint16_t manager_port, const PodExtras& extras = {}) {
  const std::uint16_t port = extras.port != 0 ? extras.port : elfin::test::free_tcp_port();
  std::string dial = fmt::format("\"tcp://127.0.0.1:{}\"", manager_port);
  for (auto peer : extras.peers) dial += fmt::format(", \"tcp://127.0.0.1:{}\"", peer);
  const std::string config_name = fmt::format("{}{}.config.toml", extras.name, no);
  dir.write(config_name, fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
discovery.predefined = [{}]
discovery.attempt_interval = "200ms"
secret = "s3cret"

[sharding.pod]
address = "127.0.0.1:{}"
shard_function = "jump-xxh64/1:{}"
retry_interval = "100ms"
refresh_interval = "200ms"
version = "{}"
{})",
                                     port, dial, port, kShards, extras.version, extras.config));
  const auto topology =
      dir.write(fmt::format("{}{}.toml", extras.name, no), fmt::format(R"([node]
no = {}
name = "pod-{}"
config = "{}"

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
{})",
                                                                       no, no, config_name, extras.topology));
  auto started = Process::start({extras.binary, "run", topology},
                                {.log_dir = dir.path(), .name = fmt::format("{}{}", extras.name, no)});
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
  return eventually(
      [&] {
        const auto shards = shards_per_pod(dir, manager_port);
        bool ok = shards.size() == pods;
        for (const auto& [pod, n] : shards) ok = ok && n == per_pod;
        return ok;
      },
      kTimeout, kPoll);
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

namespace {

// The test node's counters and traffic (sharding_node/main.cpp fixes its shard function to 24
// shards, kShards).
constexpr int kEntities = 48;

/// A pod node of the test node binary: its sharding actor, the counters, their front and a
/// traffic client. `ports` are every pod's listen port (they connect to one another).
Process start_loaded_pod(TempDir& dir, int no, std::uint16_t manager_port, const std::vector<std::uint16_t>& ports,
                         const std::string& version = "1.0.0") {
  PodExtras extras;
  extras.version = version;
  extras.binary = ELFIN_SHARDING_TEST_NODE;
  extras.port = ports[static_cast<std::size_t>(no - 1)];
  for (auto other : ports) {
    if (other != extras.port) extras.peers.push_back(other);
  }
  extras.config = fmt::format(R"(
[test.counter_entities]
owner_dir = "{}"

[test.traffic]
entities = {}
send_timeout = "10s"
)",
                              dir.file("owners"), kEntities);
  extras.topology = R"(
[[groups]]
name = "test.counter_entities"
blueprint = "test.counter_entities"

[[groups]]
name = "test.counters"
blueprint = "test.counters"

[[groups]]
name = "test.traffic"
blueprint = "test.traffic"

[[routes]]
from = "test.traffic"
to = "test.counters"
messages = ["test_counters.*"]
)";
  extras.name = "loaded";
  return start_pod(dir, no, manager_port, extras);
}

struct Sweep {
  int number = 0;
  int ok = 0;
  int failed = 0;
};

/// The traffic client's sweeps printed after `since`.
std::vector<Sweep> sweeps(const Process& pod, elfin::test::OutputMark since) {
  static const std::regex line("traffic: sweep ([0-9]+): ([0-9]+) ok, ([0-9]+) failed");
  std::vector<Sweep> found;
  const std::string text = pod.output(since);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    found.push_back({std::stoi((*it)[1].str()), std::stoi((*it)[2].str()), std::stoi((*it)[3].str())});
  }
  return found;
}

/// Waits until `pod` printed, after `since`, a sweep in which every entity answered and which
/// started after `since`: one numbered above the first sweep printed after it (that one may have
/// been under way at `since`).
bool clean_sweep_after(const Process& pod, elfin::test::OutputMark since) {
  return eventually(
      [&] {
        const auto printed = sweeps(pod, since);
        return std::ranges::any_of(printed, [&](const Sweep& sweep) {
          return sweep.number > printed.front().number && sweep.ok == kEntities && sweep.failed == 0;
        });
      },
      kTimeout, kPoll);
}

/// The entity ids `text` says started ("test counter e-7 started on ...").
std::set<std::string> started_entities(const std::string& text) {
  static const std::regex line("test counter (e-[0-9]+) started on");
  std::set<std::string> ids;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    ids.insert((*it)[1].str());
  }
  return ids;
}

/// A manager and three loaded pods; pod 2 is killed with SIGKILL while the traffic runs.
void kill_a_pod_under_load(TempDir& dir, elfin::test::ShardManagerNode& manager) {
  std::filesystem::create_directories(dir.file("owners"));
  const std::vector<std::uint16_t> ports{elfin::test::free_tcp_port(), elfin::test::free_tcp_port(),
                                         elfin::test::free_tcp_port()};
  // Pod 1 first: it owns everything, then shards move to pods 2 and 3 under traffic (handoffs).
  auto pod1 = start_loaded_pod(dir, 1, manager.port, ports);
  REQUIRE(map_becomes(dir, manager.port, 1, kShards));
  REQUIRE(clean_sweep_after(pod1, {}));
  auto pod2 = start_loaded_pod(dir, 2, manager.port, ports);
  auto pod3 = start_loaded_pod(dir, 3, manager.port, ports);
  REQUIRE(map_becomes(dir, manager.port, 3, kShards / 3));
  for (auto* pod : {&pod1, &pod2, &pod3}) {
    INFO(pod->output());
    REQUIRE(clean_sweep_after(*pod, pod->mark()));
  }
  const auto on_pod2 = started_entities(pod2.output());
  REQUIRE_FALSE(on_pod2.empty());

  const auto mark1 = pod1.mark();
  const auto mark3 = pod3.mark();
  REQUIRE(pod2.kill());
  {
    INFO(manager.process.output());
    CHECK(map_becomes(dir, manager.port, 2, kShards / 2));
  }
  // Traffic resumes: on both survivors a sweep that started after the map changed has every
  // entity answering.
  for (auto* pod : {&pod1, &pod3}) {
    INFO(pod->output());
    CHECK(clean_sweep_after(*pod, pod->mark()));
  }
  // Pod 2's entities started again on the survivors...
  const auto restarted = started_entities(pod1.output(mark1) + pod3.output(mark3));
  std::size_t moved = 0;
  for (const auto& id : on_pod2) moved += restarted.contains(id) ? 1 : 0;
  CHECK(moved > 0);
  // ...and no start ever found its owner token held by a live owner.
  CHECK_FALSE(std::filesystem::exists(dir.file("owners/violations")));
  if (std::filesystem::exists(dir.file("owners/violations")))
    FAIL(elfin::test::read_file(dir.file("owners/violations")));
  // Every entity took its token (the check ran for each).
  std::size_t tokens = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("owners"))) {
    tokens += entry.path().extension() == ".owner" ? 1 : 0;
  }
  CHECK(tokens == kEntities);
}

}  // namespace

TEST_CASE("sharding pods: a pod killed with SIGKILL under load loses its shards, no entity has two live owners",
          "[integration]") {
  TempDir dir;
  auto manager = start_manager(dir);
  kill_a_pod_under_load(dir, manager);
}

TEST_CASE(
    "sharding pods: with the map in Redis, a pod killed with SIGKILL under load loses its shards, no entity "
    "has two live owners",
    "[integration]") {
  elfin::test::RedisServer redis;
  TempDir dir;
  auto manager =
      start_manager(dir, fmt::format("storage.kind = \"redis\"\nstorage.redis = \"127.0.0.1:{}\"", redis.port()));
  kill_a_pod_under_load(dir, manager);
}

namespace {

/// Moves the manager logged in rounds after `since` ("round N (...): M moves over P pods").
int moves_logged(const Process& manager, elfin::test::OutputMark since) {
  static const std::regex line("round [0-9]+ \\([a-z]+\\): ([0-9]+) moves");
  const std::string text = manager.output(since);
  int moves = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    moves += std::stoi((*it)[1].str());
  }
  return moves;
}

void require_no_two_owners(TempDir& dir) {
  CHECK_FALSE(std::filesystem::exists(dir.file("owners/violations")));
  if (std::filesystem::exists(dir.file("owners/violations")))
    FAIL(elfin::test::read_file(dir.file("owners/violations")));
}

}  // namespace

TEST_CASE("sharding pods: with the manager killed, the pods keep serving from their maps", "[integration]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("owners"));
  auto manager = start_manager(dir);
  const std::vector<std::uint16_t> ports{elfin::test::free_tcp_port(), elfin::test::free_tcp_port()};
  auto pod1 = start_loaded_pod(dir, 1, manager.port, ports);
  auto pod2 = start_loaded_pod(dir, 2, manager.port, ports);
  REQUIRE(map_becomes(dir, manager.port, 2, kShards / 2));
  for (auto* pod : {&pod1, &pod2}) REQUIRE(clean_sweep_after(*pod, pod->mark()));

  REQUIRE(manager.process.kill());
  REQUIRE(manager.process.wait_exit(kTimeout));
  // Every entity still answers, on both pods, in sweeps that started after the manager died:
  // the pods route by the maps they hold, and entities move nowhere without a manager.
  for (auto* pod : {&pod1, &pod2}) {
    INFO(pod->output());
    const auto after_kill = pod->mark();
    CHECK(clean_sweep_after(*pod, after_kill));
    CHECK(clean_sweep_after(*pod, pod->mark()));
  }
  require_no_two_owners(dir);
}

TEST_CASE(
    "sharding pods: a rolling update from v1 to v2 under load gives no shard to v1 once v2 is there and "
    "moves each shard once per replaced pod",
    "[integration]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("owners"));
  auto manager = start_manager(dir);
  const std::vector<std::uint16_t> ports{elfin::test::free_tcp_port(), elfin::test::free_tcp_port(),
                                         elfin::test::free_tcp_port(), elfin::test::free_tcp_port()};
  auto pod1 = start_loaded_pod(dir, 1, manager.port, ports, "1.0.0");
  auto pod2 = start_loaded_pod(dir, 2, manager.port, ports, "1.0.0");
  REQUIRE(map_becomes(dir, manager.port, 2, kShards / 2));
  for (auto* pod : {&pod1, &pod2}) REQUIRE(clean_sweep_after(*pod, pod->mark()));

  // v2 pod 3 joins; then v1 pod 1 stops: its shards go to pod 3 only (v1 pod 2 gets none).
  const auto update = manager.process.mark();
  auto pod3 = start_loaded_pod(dir, 3, manager.port, ports, "2.0.0");
  REQUIRE(manager.process.wait_for_output("registered (v2.0.0)", kTimeout, update));
  REQUIRE(pod1.signal(SIGTERM));
  REQUIRE(pod1.wait_exit(kTimeout));
  {
    INFO(manager.process.output(update));
    CHECK(map_becomes(dir, manager.port, 2, kShards / 2));  // pod 2 (v1) and pod 3 (v2), 12 each
  }

  // v2 pod 4 joins; then v1 pod 2 stops: its shards go to the v2 pods.
  auto pod4 = start_loaded_pod(dir, 4, manager.port, ports, "2.0.0");
  REQUIRE(manager.process.wait_for_output(
      std::regex("registered \\(v2\\.0\\.0\\)[^\\n]*\\n(.|\\n)*registered \\(v2\\.0\\.0\\)"), kTimeout, update));
  REQUIRE(pod2.signal(SIGTERM));
  REQUIRE(pod2.wait_exit(kTimeout));
  {
    INFO(manager.process.output(update));
    CHECK(map_becomes(dir, manager.port, 2, kShards / 2));  // pods 3 and 4, 12 each
    // Each shard moved once: 12 when pod 1 left, 12 when pod 2 left, none to a v1 pod between.
    CHECK(moves_logged(manager.process, update) == kShards);
    // Both left gracefully: they unregistered rather than being found dead.
    const std::string log = manager.process.output(update);
    std::size_t unregistered = 0;
    for (auto at = log.find(" unregistered"); at != std::string::npos; at = log.find(" unregistered", at + 1))
      ++unregistered;
    CHECK(unregistered == 2);
  }
  for (auto* pod : {&pod3, &pod4}) {
    INFO(pod->output());
    CHECK(clean_sweep_after(*pod, pod->mark()));
  }
  require_no_two_owners(dir);
}

namespace {

/// A pod node of the test node binary mounting the singleton `test.scheduler` from its topology file.
Process start_singleton_pod(TempDir& dir, int no, std::uint16_t manager_port) {
  PodExtras extras;
  extras.binary = ELFIN_SHARDING_TEST_NODE;
  extras.config = fmt::format(R"(
[test.scheduler]
owner_dir = "{}"
)",
                              dir.file("owners"));
  extras.topology = R"(
[[groups]]
name = "test.scheduler"
blueprint = "test.scheduler"
)";
  extras.name = "singleton";
  return start_pod(dir, no, manager_port, extras);
}

/// How many times `pod` printed that the scheduler started / stopped there.
std::size_t scheduler_lines(const Process& pod, std::string_view what) {
  const std::string text = pod.output();
  const std::string line = fmt::format("test scheduler {} on", what);
  std::size_t n = 0;
  for (auto at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) ++n;
  return n;
}

/// Waits until exactly one of `pods` runs the scheduler (started more often than stopped, and
/// not `gone`) and returns its index.
std::optional<std::size_t> scheduler_runs_once(const std::vector<Process*>& pods, const std::set<std::size_t>& gone) {
  std::optional<std::size_t> once;
  eventually(
      [&] {
        std::vector<std::size_t> running;
        for (std::size_t i = 0; i < pods.size(); ++i) {
          if (gone.contains(i)) continue;
          if (scheduler_lines(*pods[i], "started") > scheduler_lines(*pods[i], "stopped")) running.push_back(i);
        }
        once = running.size() == 1 ? std::optional(running.front()) : std::nullopt;
        return once.has_value();
      },
      kTimeout, kPoll);
  return once;
}

}  // namespace

TEST_CASE(
    "sharding pods: a singleton mounted from topology files runs on one pod, and on another once that pod stops "
    "or is killed",
    "[integration]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("owners"));
  auto manager = start_manager(dir);
  auto pod1 = start_singleton_pod(dir, 1, manager.port);
  auto pod2 = start_singleton_pod(dir, 2, manager.port);
  auto pod3 = start_singleton_pod(dir, 3, manager.port);
  REQUIRE(map_becomes(dir, manager.port, 3, kShards / 3));
  std::vector<Process*> pods{&pod1, &pod2, &pod3};
  std::set<std::size_t> gone;

  // Started unasked, by the pod owning its shard, and only there.
  auto first = scheduler_runs_once(pods, gone);
  REQUIRE(first);
  const auto starts = [&] {
    std::vector<std::size_t> n;
    n.reserve(pods.size());
    for (auto* pod : pods) n.push_back(scheduler_lines(*pod, "started"));
    return n;
  };
  // A graceful stop ends it there before the shard moves; another pod starts it.
  auto before = starts();
  REQUIRE(pods[*first]->signal(SIGTERM));
  REQUIRE(pods[*first]->wait_exit(kTimeout));
  CHECK(scheduler_lines(*pods[*first], "stopped") == scheduler_lines(*pods[*first], "started"));
  gone.insert(*first);
  auto second = scheduler_runs_once(pods, gone);
  {
    INFO(manager.process.output());
    REQUIRE(second);
  }
  CHECK(starts()[*second] == before[*second] + 1);  // started anew, after the stop
  // Killed with SIGKILL: the manager's health check finds the pod dead, the last pod starts it.
  before = starts();
  REQUIRE(pods[*second]->kill());
  gone.insert(*second);
  auto third = scheduler_runs_once(pods, gone);
  {
    INFO(manager.process.output());
    REQUIRE(third);
  }
  CHECK(*third != *first);
  CHECK(*third != *second);
  CHECK(starts()[*third] == before[*third] + 1);
  // Never two at once: no start found the token held by a live instance.
  require_no_two_owners(dir);
}
