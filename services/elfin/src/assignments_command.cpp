#include "assignments_command.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/assignment/assignment_map.hpp>
#include <elfin/delay.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/system.hpp>
#include <elfin/topology.hpp>

#include "options.hpp"

namespace elfin::cli {

const char* const kAssignmentsUsage = R"(usage: elfin shard --assignments --manager tcp://HOST:PORT [options]

Joins the cluster as a short-lived node, asks the shard manager for its live map and prints it:
the epoch and shard function, one line per pod (address#incarnation, version, shard count and
shards, and with replication_factor above 1 the number of shards it holds a replica of), then
the unassigned shards.

options:
  --manager ADDR      the manager node's network address, tcp://HOST:PORT (required)
  --manager-node N    the manager's node number (default 100)
  --node N            this command's node number, unique in the cluster (default 65000)
  --secret S          the cluster secret, if the cluster has one
  --timeout SECONDS   how long to wait for the answer (default 10)
  -h, --help          this help

Exit code 0 once the map is printed, 1 if the manager did not answer in time, 2 on bad usage.
)";

namespace {

struct AssignmentsArgs {
  std::string manager;
  std::uint16_t manager_node = 100;
  std::uint16_t node = 65000;
  std::optional<std::string> secret;
  std::uint32_t timeout_seconds = 10;
  bool help = false;
};

Result<AssignmentsArgs, std::string> parse(const std::vector<std::string_view>& args) {
  AssignmentsArgs parsed;
  Options options(args);
  while (options.next()) {
    bool ok = true;
    if (options.arg() == "--assignments") continue;
    if (options.arg() == "-h" || options.arg() == "--help") {
      parsed.help = true;
    } else if (options.is("--manager")) {
      ok = options.read(parsed.manager);
      if (ok && !parsed.manager.starts_with("tcp://"))
        return Err{fmt::format("--manager `{}`: expected tcp://HOST:PORT", parsed.manager)};
    } else if (options.is("--manager-node")) {
      ok = options.read(parsed.manager_node, std::uint16_t{1}, std::uint16_t{65535});
    } else if (options.is("--node")) {
      ok = options.read(parsed.node, std::uint16_t{1}, std::uint16_t{65535});
    } else if (options.is("--secret")) {
      ok = options.read(parsed.secret);
    } else if (options.is("--timeout")) {
      ok = options.read(parsed.timeout_seconds, 1u, 3600u);
    } else {
      return Err{options.unknown()};
    }
    if (!ok) return Err{options.error()};
  }
  if (!parsed.help && parsed.manager.empty()) return Err{std::string("--manager is required")};
  if (!parsed.help && parsed.node == parsed.manager_node)
    return Err{std::string("--node must differ from --manager-node")};
  return parsed;
}

/// Where the asking actor leaves what it got.
struct Outcome {
  std::mutex mutex;
  std::optional<protocols::sharding::Assignments> assignments;
  std::string error;
};

struct AskAgain {
  ELFIN_MESSAGE(elfin_cli, AskAgain);
};

/// Asks until the manager answers (the connection takes a moment) or the deadline passes, then
/// stops the node.
Task<> ask(Context<> ctx, std::shared_ptr<Outcome> outcome, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no answer";
  for (;;) {
    auto answer = co_await ctx.request(protocols::sharding::GetAssignments{});
    if (answer) {
      std::lock_guard lock(outcome->mutex);
      outcome->assignments = std::move(answer).value();
      break;
    }
    last_error = to_string(answer.error());
    if (std::chrono::steady_clock::now() >= deadline) {
      std::lock_guard lock(outcome->mutex);
      outcome->error = fmt::format("the shard manager did not answer within {} s: {}", timeout.count(), last_error);
      break;
    }
    ctx.attach(Delay(std::chrono::milliseconds(100), AskAgain{}));
    while (auto envelope = co_await ctx.recv()) {
      if (envelope->is<AskAgain>()) break;
    }
  }
  ctx.terminate_system("the map was asked for");
}

void print(std::FILE* out, const protocols::sharding::Assignments& map) {
  fmt::print(out, "epoch {}, {}, {} pods\n", map.epoch, map.shard_function, map.pods.size());
  for (const auto& pod : map.pods) {
    const auto shards = map.shards_of(pod.pod);
    fmt::print(out, "{}\tv{}\t{} shards\t{}", pod.pod, pod.version, shards.size(),
               shards.empty() ? "-" : assignment::format_shard_ids(shards));
    if (map.replication_factor > 1) {
      // With replicas: how many shards this pod holds a replica of (its owned ones included).
      std::size_t replicas = 0;
      for (std::uint32_t i = 0; i < map.owners.size(); ++i) {
        for (const auto& entry : map.replica_set(map.first_shard + i)) replicas += entry.pod == pod.pod;
      }
      fmt::print(out, "\t{} replicas", replicas);
    }
    fmt::print(out, "\n");
  }
  std::vector<std::uint32_t> unassigned;
  for (std::size_t i = 0; i < map.owners.size(); ++i) {
    if (map.owners[i] < 0) unassigned.push_back(map.first_shard + static_cast<std::uint32_t>(i));
  }
  fmt::print(out, "unassigned\t{} shards\t{}\n", unassigned.size(),
             unassigned.empty() ? "-" : assignment::format_shard_ids(unassigned));
}

}  // namespace

int assignments_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
  auto parsed = parse(args);
  if (!parsed) {
    fmt::print(err, "elfin shard --assignments: {}\n\n{}", parsed.error(), kAssignmentsUsage);
    return 2;
  }
  if (parsed->help) {
    fmt::print(out, "{}", kAssignmentsUsage);
    return 0;
  }
  auto outcome = std::make_shared<Outcome>();
  Topology topology;
  topology.local("system.network").mount(network::blueprint());
  auto manager = topology.local("sharding.manager");
  manager.mount(network::remote_group({.nodes = {parsed->manager_node}}));
  auto asker = topology.local("asker");
  asker.route_to(manager, filters::protocol("sharding"));
  const auto timeout = std::chrono::seconds(parsed->timeout_seconds);
  asker.mount(ActorGroup().exec([outcome, timeout](Context<> ctx) { return ask(ctx, outcome, timeout); })).entrypoint();

  StartOptions start;
  start.node_no = parsed->node;
  const std::optional<std::string>& secret = parsed->secret;
  start.config_toml = fmt::format(R"([common.system.logging]
max_level = "Error"

[system.network]
discovery.predefined = ["{}"]
discovery.attempt_interval = "500ms"
{}
)",
                                  parsed->manager, secret ? fmt::format("secret = \"{}\"", *secret) : std::string{});
  auto system = System::start(std::move(topology), std::move(start));
  if (!system) {
    fmt::print(err, "elfin shard --assignments: {}\n", system.error());
    return 1;
  }
  system->join();
  std::lock_guard lock(outcome->mutex);
  const std::optional<protocols::sharding::Assignments>& assignments = outcome->assignments;
  if (!assignments) {
    fmt::print(err, "elfin shard --assignments: {}\n", outcome->error.empty() ? "no answer" : outcome->error);
    return 1;
  }
  print(out, *assignments);
  return 0;
}

}  // namespace elfin::cli
