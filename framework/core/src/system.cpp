#include <elfin/system.hpp>

#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>

#include <elfin/config.hpp>
#include <elfin/messages.hpp>

#include "system_core.hpp"

namespace elfin {

namespace {

struct RuntimeConfig {
  unsigned workers = 0;
  ELFIN_CONFIG(workers);
};

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += fmt::format("\n  - {}", line);
  return out;
}

}  // namespace

Result<System, std::string> System::start(Topology topology, StartOptions options) {
  std::vector<std::string> problems = MessageRegistry::instance().conflicts();

  const auto& decls = topology.groups();
  if (decls.size() > 255) problems.push_back(fmt::format("{} groups declared; a node holds at most 255", decls.size()));
  for (const auto& decl : decls) {
    if (decl.name.empty()) problems.emplace_back("a group has an empty name");
    if (!decl.blueprint)
      problems.push_back(fmt::format("group `{}` is declared but nothing is mounted on it", decl.name));
    for (const auto& route : decl.routes) {
      if (&decls[route.to] == &decl) problems.push_back(fmt::format("group `{}` routes to itself", decl.name));
    }
  }

  AnyConfig config = options.config.value_or(AnyConfig{});
  if (!options.config && !options.config_toml.empty()) {
    auto parsed = AnyConfig::from_toml(options.config_toml, options.config_source);
    if (parsed) {
      config = std::move(*parsed);
    } else {
      problems.push_back(std::move(parsed).error());
    }
  }
  if (!problems.empty()) return Err{"cannot start the system:" + join_lines(problems)};

  // `[system.runtime] workers = N` in the config sets the worker count when the code does not.
  auto runtime = config.section("system.runtime").decode<RuntimeConfig>();
  if (!runtime) {
    return Err{
        fmt::format("cannot start the system:\n  - {}: [system.runtime]: {}", options.config_source, runtime.error())};
  }
  if (options.workers == 0) options.workers = runtime->workers;

  auto core = std::make_unique<detail::SystemCore>(std::move(options));
  TraceId::set_node_no(core->node_no());
  for (std::size_t i = 0; i < decls.size(); ++i) {
    const auto group_no = static_cast<std::uint8_t>(i + 1);
    core->add_group(decls[i].blueprint->instantiate(
        detail::GroupInit{core.get(), decls[i].name, group_no, Addr::group(core->node_no(), group_no)}));
  }
  for (std::size_t i = 0; i < decls.size(); ++i) {
    for (const auto& route : decls[i].routes) {
      core->groups()[i]->add_route({route.filter, core->groups()[route.to].get()});
    }
  }
  if (core->find_group("system.dumpers") != nullptr) core->enable_dumping(dumping::kDefaultStorageCapacity);
  if (core->find_group("system.telemeters") != nullptr) core->enable_telemetry();
  std::vector<AnyConfig> sections;
  for (const auto& group : core->groups()) {
    sections.push_back(config.section(group->name()));
    if (auto applied = group->apply_config(sections.back()); !applied) {
      problems.push_back(fmt::format("{}: [{}]: {}", core->options().config_source, group->name(), applied.error()));
    }
  }
  if (!problems.empty()) return Err{"cannot start the system:" + join_lines(problems)};

  core->scheduler().start();
  // The start-up UpdateConfig is what starts actors (the default router unicasts it to the
  // singleton); entrypoints get theirs first.
  for (bool entrypoints : {true, false}) {
    for (std::size_t i = 0; i < decls.size(); ++i) {
      if (decls[i].entrypoint != entrypoints) continue;
      core->send_to_group(*core->groups()[i], Envelope::make(UpdateConfig{sections[i]}, Addr{}, TraceId::generate()));
    }
  }
  return System{std::move(core)};
}

System::System(std::unique_ptr<detail::SystemCore> core) : core_(std::move(core)) {}
System::System(System&&) noexcept = default;
System& System::operator=(System&&) noexcept = default;
System::~System() = default;

void System::terminate(std::string reason) { core_->terminate(std::move(reason)); }
void System::join() { core_->join(); }
bool System::join_for(std::chrono::milliseconds timeout) { return core_->join_for(timeout); }

Result<void, std::string> System::advance_time(std::chrono::nanoseconds by, std::chrono::milliseconds settle_timeout) {
  return core_->advance_time(by, settle_timeout);
}

Addr System::group_addr(std::string_view name) const {
  auto* group = core_->find_group(name);
  return group ? group->addr() : Addr{};
}

detail::GroupRuntime* System::core_group(std::string_view name) const { return core_->find_group(name); }
dumping::DumpStorage* System::dump_storage() const { return core_->dump_storage(); }
std::vector<telemetry::MetricSample> System::scrape_metrics() const {
  return core_->groups().empty() ? std::vector<telemetry::MetricSample>{} : telemetry::scrape(*core_->groups().front());
}

std::size_t System::active_actors() const { return core_->live_actors(); }

int run(Topology topology, StartOptions options) {
  // Signals are caught from before the start, so a SIGTERM that arrives while the system starts
  // terminates it gracefully instead of killing the process (Asio queues it until we wait).
  asio::io_context io;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  auto system = System::start(std::move(topology), std::move(options));
  if (!system) {
    fmt::print(stderr, "elfin: {}\n", system.error());
    return 1;
  }
  bool signalled = false;
  std::function<void(const asio::error_code&, int)> on_signal = [&](const asio::error_code& ec, int signo) {
    if (ec) return;
    if (std::exchange(signalled, true)) std::_Exit(128 + signo);  // a second signal: exit at once
    system->terminate(fmt::format("signal {}", signo == SIGINT ? "SIGINT" : "SIGTERM"));
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);
  std::thread waiter([&] {
    system->join();
    asio::post(io, [&] { signals.cancel(); });
  });
  io.run();
  waiter.join();
  return 0;
}

}  // namespace elfin

namespace elfin::detail {
void terminate_system(SystemCore& system, std::string reason) { system.terminate(std::move(reason)); }
}  // namespace elfin::detail
