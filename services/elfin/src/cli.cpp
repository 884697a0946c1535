#include <elfin/cli.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include <csignal>

#include <elfin/configurer.hpp>
#include <elfin/dumper/dump_command.hpp>
#include <elfin/dumper/dumper.hpp>
#include <elfin/logger/logger.hpp>
#include <elfin/network/network.hpp>
#include <elfin/system.hpp>
#include <elfin/telemeter/telemeter.hpp>

#ifndef ELFIN_VERSION
#define ELFIN_VERSION "unknown"
#endif

namespace elfin::cli {

namespace {

constexpr std::string_view kConfigurers = "system.configurers";
constexpr std::string_view kConfigurerBlueprint = "elfin.configurer";

constexpr std::string_view kUsage = R"(usage: {0} <command> [options]

commands:
  run <topology.toml> [--config <file>]
        Start the node the topology file describes and run it until SIGTERM or SIGINT
        (a second signal exits at once). --config replaces the file's [node] config.
  check <topology.toml> [--config <file>] [--strict]
        Validate the topology and its config as `run` would, without starting anything.
        Warnings (unknown config keys, unused sections) are printed; --strict makes them errors.
        Exit code 0 if valid, 1 if not.
  blueprints
        List the blueprints this binary can mount, and its node selectors.
  dump [options] FILE...
        Read dump files: merge, sort by time, filter by trace, group, message, time and
        direction; a table, or --json for NDJSON. `{0} dump --help` lists the options.
{1}
options:
  -h, --help     this help
  --version      the elfin version

Topology files and configs: see the guide's "Topology files" and "Configuration" chapters.
)";

// The binary's name (argv[0] without its directory): help and errors name the program the user
// ran, which is `elfin` or a service's own binary built on cli::main. Set once, before anything
// reads it. A function's static: a global std::string's constructor could throw before main.
std::string& program() {
  static std::string name = "elfin";
  return name;
}

// The binary's own commands (cli::main's `commands`). Set once, before anything reads it.
const std::vector<Command>* g_commands = nullptr;

std::string usage() {
  std::string added;
  if (g_commands != nullptr) {
    for (const auto& command : *g_commands) added += fmt::format(fmt::runtime(command.help), program());
  }
  return fmt::format(fmt::runtime(kUsage), program(), added);
}

struct Args {
  std::string command;
  std::string topology;
  std::string config;
  bool strict = false;
};

// Parses `<command> <topology> [--config F] [--strict]`; an error text on bad usage.
Result<Args, std::string> parse_args(const std::vector<std::string_view>& argv) {
  Args args;
  args.command = std::string(argv[0]);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    if (arg == "--config") {
      if (i + 1 == argv.size()) return Err{std::string("--config needs a file")};
      args.config = std::string(argv[++i]);
    } else if (arg.starts_with("--config=")) {
      args.config = std::string(arg.substr(9));
    } else if (arg == "--strict" && args.command == "check") {
      args.strict = true;
    } else if (arg.starts_with("-")) {
      return Err{fmt::format("unknown option `{}` for `{}`", arg, args.command)};
    } else if (args.topology.empty()) {
      args.topology = std::string(arg);
    } else {
      return Err{fmt::format("`{}` takes one topology file; got `{}` and `{}`", args.command, args.topology, arg)};
    }
  }
  if (args.topology.empty()) return Err{fmt::format("`{}` needs a topology file", args.command)};
  return args;
}

int usage_error(const std::string& what) {
  fmt::print(stderr, "{}: {}\n\n{}", program(), what, usage());
  return 2;
}

int check(const Args& args, const BlueprintRegistry& registry) {
  auto node = load_node(args.topology, args.config, registry);
  if (!node) {
    fmt::print(stderr, "{}: {}\n", program(), node.error());
    return 1;
  }
  std::size_t groups = node->topology.groups().size();
  std::size_t routes = 0;
  for (const auto& group : node->topology.groups()) routes += group.routes.size();
  auto checked = System::check(node->topology, node->start_options());
  if (!checked) {
    fmt::print(stderr, "{}: {}\n", program(), checked.error());
    return 1;
  }
  for (const auto& warning : *checked) fmt::print(stderr, "warning: {}\n", warning);
  if (args.strict && !checked->empty()) {
    fmt::print(stderr, "{}: {} warning(s), and --strict makes them errors\n", program(), checked->size());
    return 1;
  }
  fmt::print("ok: {}: node {} (`{}`), {} groups, {} routes, {} remote groups, config {}\n", node->source, node->node_no,
             node->node_name, groups, routes, node->remote_groups.size(),
             node->config_path.empty() ? "none" : node->config_path);
  return 0;
}

// `elfin dump --follow` runs until SIGINT/SIGTERM; the handler only sets this (lock-free, so
// async-signal-safe) flag, and the follower sees it within one poll.
std::atomic<bool> g_stop_dump{false};
extern "C" void stop_dump(int) { g_stop_dump.store(true, std::memory_order_relaxed); }

int dump(const std::vector<std::string_view>& args) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  auto command = dumper::parse_dump_command(
      args, static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
  if (!command) {
    fmt::print(stderr, "{} dump: {}\n", program(), command.error());
    return 2;
  }
  if (command->follow) {
    std::signal(SIGINT, stop_dump);
    std::signal(SIGTERM, stop_dump);
  }
  return dumper::run_dump_command(*command, stdout, stderr, g_stop_dump);
}

int run(const Args& args, const BlueprintRegistry& registry) {
  auto node = load_node(args.topology, args.config, registry);
  if (!node) {
    fmt::print(stderr, "{}: {}\n", program(), node.error());
    return 1;
  }
  return elfin::run(node->topology, node->start_options());
}

}  // namespace

void register_framework(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kConfigurerBlueprint), configurer::blueprint(),
                             "system.configurers: loads the config file, validates and reloads it");
  std::ignore = registry.add("elfin.dumper", dumper::blueprint(),
                             "system.dumpers: writes every message actors receive and send to a dump file");
  std::ignore = registry.add("elfin.logger", logger::blueprint(),
                             "system.loggers: writes log records to stderr, stdout or a file");
  std::ignore = registry.add("elfin.telemeter", telemeter::blueprint(),
                             "system.telemeters: serves the metrics on a Prometheus /metrics endpoint");
  network::register_blueprints(registry);
}

Result<TopologyFile, TopologyError> load_node(const std::string& topology_path, const std::string& config_override,
                                              const BlueprintRegistry& registry) {
  auto node = load_topology_file(topology_path, registry);
  if (!node) return node;
  if (!config_override.empty()) {
    node->config_path = config_override;
    if (!std::filesystem::exists(config_override)) {
      std::string text = fmt::format("{}: no such config file (given with --config)", config_override);
      return Err{TopologyError(TopologyError::Invalid, text, node->source, {{0, text}})};
    }
  } else if (!node->config_path.empty() && !std::filesystem::exists(node->config_path)) {
    std::string text = fmt::format("{}:{}: [node] config: no such config file `{}`", node->source, node->config_line,
                                   node->config_path);
    return Err{TopologyError(TopologyError::Invalid, text, node->source, {{node->config_line, text}})};
  }
  bool has_configurer = false;
  for (const auto& group : node->topology.groups()) has_configurer = has_configurer || group.name == kConfigurers;
  if (!has_configurer) {
    if (const Blueprint* configurer = registry.find(kConfigurerBlueprint)) {
      node->topology.local(std::string(kConfigurers)).mount(*configurer).entrypoint();
    }
  }
  return node;
}

namespace {

int dispatch(int argc, char** argv, const BlueprintRegistry& registry) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given");
  const std::string_view command = args.front();
  if (command == "-h" || command == "--help" || command == "help") {
    fmt::print("{}", usage());
    return 0;
  }
  if (command == "--version" || command == "version") {
    if (program() == "elfin") {
      fmt::print("elfin {}\n", ELFIN_VERSION);
    } else {
      fmt::print("{} (elfin {})\n", program(), ELFIN_VERSION);
    }
    return 0;
  }
  if (command == "blueprints") {
    for (const auto& entry : registry.entries()) fmt::print("{:<24} {}\n", entry.name, entry.description);
    const auto selectors = registry.selectors();
    if (!selectors.empty()) fmt::print("\nnode selectors (`pick` in a [[remote]]):\n");
    for (const auto& entry : selectors) fmt::print("{:<24} {}\n", entry.name, entry.description);
    return 0;
  }
  if (command == "dump") return dump({args.begin() + 1, args.end()});
  if (command != "run" && command != "check") {
    for (const auto& added : *g_commands) {
      if (added.name == command) return added.run({args.begin() + 1, args.end()});
    }
    return usage_error(fmt::format("unknown command `{}`", command));
  }
  for (auto arg : args) {
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", usage());
      return 0;
    }
  }
  auto parsed = parse_args(args);
  if (!parsed) return usage_error(parsed.error());
  return command == "run" ? run(*parsed, registry) : check(*parsed, registry);
}

}  // namespace

int main(int argc, char** argv, const BlueprintRegistry& registry, const std::vector<Command>& commands) {
  // Expected failures are values all the way up; an exception here is a bug (or out of memory),
  // reported like any other error rather than as an abort.
  if (argc > 0 && argv[0] != nullptr && *argv[0] != '\0') {
    program() = std::filesystem::path(argv[0]).filename().string();
  }
  g_commands = &commands;
  try {
    return dispatch(argc, argv, registry);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal error: {}\n", program(), e.what());
    return 1;
  }
}

}  // namespace elfin::cli
