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
#include <elfin/internal/dump_storage.hpp>
#include <elfin/messages.hpp>
#include <elfin/system_config.hpp>

#include "observers/runtime_log.hpp"
#include "system/system_core.hpp"

namespace elfin {

namespace {

/// Groups that watch the others: the system starts them first, before any entrypoint.
bool is_observer(std::string_view group) {
  return group == "system.dumpers" || group == "system.telemeters" || group == "system.loggers";
}

/// Threads for `ctx.blocking` work unless configured: enough for a few file syncs at once, few
/// enough that they cannot crowd out the workers.
constexpr unsigned kDefaultBlockingThreads = 4;

// `[system.runtime]`: settings of the node itself. StartOptions set from C++ win over these.
struct RuntimeConfig {
  unsigned workers = 0;
  unsigned blocking_threads = 0;
  std::optional<std::chrono::milliseconds> terminate_closing_after;
  std::optional<std::chrono::milliseconds> terminate_give_up_after;
  std::optional<double> memory_threshold;
  std::optional<std::chrono::milliseconds> memory_check_interval;
  ELFIN_CONFIG(workers, blocking_threads, terminate_closing_after, terminate_give_up_after, memory_threshold,
               memory_check_interval);
};

/// The option as given, else as configured, else the fallback; returns the value it ends with.
template <class T>
T fill(std::optional<T>& option, const std::optional<T>& configured, T fallback) {
  if (!option) option = configured.value_or(fallback);
  return *option;
}

}  // namespace

StartError::StartError(std::vector<std::string> problems, std::optional<ConfigError> config_error)
    : message_("cannot start the system:"), problems_(std::move(problems)), config_error_(std::move(config_error)) {
  for (const auto& problem : problems_) message_ += fmt::format("\n  - {}", problem);
}

namespace {

constexpr std::string_view kConfigurers = "system.configurers";

struct Prepared {
  std::unique_ptr<detail::SystemCore> core;
  std::vector<AnyConfig> sections;
  std::vector<std::string> warnings;
};

// Everything `start` and `check` share: validation of messages, topology and configs, and the
// groups instantiated with their configs applied. Nothing runs yet.
Result<Prepared, StartError> prepare(const Topology& topology, StartOptions options) {
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
  std::optional<ConfigError> config_error;
  if (!options.config && !options.config_toml.empty()) {
    auto parsed = AnyConfig::from_toml(options.config_toml, options.config_source);
    if (parsed) {
      config = std::move(*parsed);
    } else {
      problems.push_back(parsed.error().message());
      config_error = std::move(parsed).error();
    }
  } else if (!options.config && !options.config_path.empty()) {
    options.config_source = options.config_path;
    auto parsed = AnyConfig::from_file(options.config_path);
    if (parsed) {
      config = std::move(*parsed);
    } else {
      problems.push_back(parsed.error().message());
      config_error = std::move(parsed).error();
    }
  }
  if (!problems.empty()) return Err{StartError(std::move(problems), std::move(config_error))};

  Prepared prepared;
  // `[system.runtime]` sets the worker count, termination stages and memory tracker when the code
  // does not.
  ConfigReport runtime_report;
  auto runtime = config.section("system.runtime").decode_reporting<RuntimeConfig>(runtime_report, "[system.runtime]");
  if (!runtime_report.ok()) return Err{StartError(std::move(runtime_report.errors))};
  prepared.warnings = std::move(runtime_report.warnings);
  if (options.workers == 0) options.workers = runtime.workers;
  if (options.blocking_threads == 0) options.blocking_threads = runtime.blocking_threads;
  if (options.blocking_threads == 0) options.blocking_threads = kDefaultBlockingThreads;
  fill(options.terminate_closing_after, runtime.terminate_closing_after, std::chrono::milliseconds{30'000});
  fill(options.terminate_give_up_after, runtime.terminate_give_up_after, std::chrono::milliseconds{15'000});
  const double memory_threshold = fill(options.memory_threshold, runtime.memory_threshold, 0.9);
  const auto memory_check_interval =
      fill(options.memory_check_interval, runtime.memory_check_interval, std::chrono::milliseconds{3'000});
  if (memory_check_interval.count() <= 0) {
    problems.push_back(fmt::format("{}[system.runtime]: memory_check_interval must be positive, got {} ms",
                                   config.section("system.runtime").where("memory_check_interval"),
                                   memory_check_interval.count()));
  }
  if (!(memory_threshold > 0.0)) {
    problems.push_back(fmt::format("{}[system.runtime]: memory_threshold must be above 0 (a share such as 0.9), got {}",
                                   config.section("system.runtime").where("memory_threshold"), memory_threshold));
  }
  if (!problems.empty()) return Err{StartError(std::move(problems), std::move(config_error))};
  std::vector<std::string> names;
  names.reserve(decls.size());
  for (const auto& decl : decls) names.push_back(decl.name);
  ConfigReport shape = check_config_document(config, names);
  if (!shape.ok()) return Err{StartError(std::move(shape.errors))};
  for (auto& w : shape.warnings) prepared.warnings.push_back(std::move(w));

  auto core = std::make_unique<detail::SystemCore>(std::move(options));
  for (std::size_t i = 0; i < decls.size(); ++i) {
    const auto group_no = static_cast<std::uint8_t>(i + 1);
    // Observers are started by the system itself, like entrypoints (so a configurer skips them).
    // NOLINTNEXTLINE(bugprone-unchecked-optional-access): a group without one is refused above
    core->add_group(decls[i].blueprint->instantiate(
        detail::GroupInit{core.get(), decls[i].name, group_no, Addr::group(core->node_no(), group_no),
                          decls[i].entrypoint || is_observer(decls[i].name)}));
  }
  for (std::size_t i = 0; i < decls.size(); ++i) {
    for (const auto& route : decls[i].routes) {
      core->groups()[i]->add_route({route.filter, core->groups()[route.to].get()});
    }
  }
  if (core->find_group("system.dumpers") != nullptr) core->enable_dumping(dumping::kDefaultStorageCapacity);
  if (core->find_group("system.telemeters") != nullptr) core->enable_telemetry();
  if (auto* loggers = core->find_group("system.loggers")) core->log_sink().enable(*loggers);
  for (const auto& group : core->groups()) {
    prepared.sections.push_back(config.for_group(group->name()));
    ConfigReport report = group->check_config(prepared.sections.back());
    for (auto& e : report.errors) problems.push_back(std::move(e));
    for (auto& w : report.warnings) prepared.warnings.push_back(std::move(w));
  }
  if (!problems.empty()) return Err{StartError(std::move(problems), std::move(config_error))};
  for (std::size_t i = 0; i < core->groups().size(); ++i) {
    if (auto applied = core->groups()[i]->apply_config(prepared.sections[i]); !applied) {
      problems.push_back(fmt::format("[{}]: {}", core->groups()[i]->name(), applied.error().message()));
    }
  }
  if (!problems.empty()) return Err{StartError(std::move(problems), std::move(config_error))};
  prepared.core = std::move(core);
  return prepared;
}

}  // namespace

Result<std::vector<std::string>, StartError> System::check(Topology topology, StartOptions options) {
  options.workers = 1;  // nothing runs; no need for a full pool
  auto prepared = prepare(topology, std::move(options));
  if (!prepared) return Err{std::move(prepared).error()};
  return std::move(prepared->warnings);
}

Result<System, StartError> System::start(Topology topology, StartOptions options) {
  auto prepared = prepare(topology, std::move(options));
  if (!prepared) return Err{std::move(prepared).error()};
  auto& core = prepared->core;
  for (const auto& warning : prepared->warnings) {
    detail::log_runtime(*core, LogLevel::Warn, ActorMeta{"system.init", "_"}, "config: {}", warning);
  }
  TraceId::set_node_no(core->node_no());

  const auto& decls = topology.groups();
  bool has_configurer = false;
  for (const auto& decl : decls) has_configurer = has_configurer || (decl.name == kConfigurers && decl.entrypoint);

  core->scheduler().start();
  core->start_memory_tracker();
  // The start-up UpdateConfig is what starts actors (the default router unicasts it to the
  // singleton); entrypoints get theirs first. A configurer (an entrypoint) distributes the rest
  // itself, after asking every group to validate its config.
  // The observers (dumpers, telemeters, loggers) go before everyone: they record what the others do,
  // from the first message on.
  // Under virtual time the start-up messages are queued together: the actors they start then run
  // in the same order on every start (one worker), not as the worker happens to catch up.
  const bool batch = core->options().virtual_time;
  if (batch) core->scheduler().begin_batch();
  auto start_group = [&](std::size_t i) {
    core->send_to_group(*core->groups()[i],
                        Envelope::make(UpdateConfig{prepared->sections[i]}, Addr{}, TraceId::generate()));
  };
  for (std::size_t i = 0; i < decls.size(); ++i) {
    if (is_observer(decls[i].name)) start_group(i);
  }
  for (bool entrypoints : {true, false}) {
    if (!entrypoints && has_configurer) break;
    for (std::size_t i = 0; i < decls.size(); ++i) {
      if (decls[i].entrypoint == entrypoints && !is_observer(decls[i].name)) start_group(i);
    }
  }
  if (batch) core->scheduler().end_batch();
  return System{std::move(core)};
}

System::System(std::unique_ptr<detail::SystemCore> core) : core_(std::move(core)) {}
System::System(System&&) noexcept = default;
System& System::operator=(System&&) noexcept = default;
System::~System() = default;

void System::terminate(std::string reason) { core_->termination().terminate(std::move(reason)); }
void System::join() { core_->termination().join(); }
bool System::join_for(std::chrono::milliseconds timeout) { return core_->termination().join_for(timeout); }

Result<void, TimeError> System::advance_time(std::chrono::nanoseconds by, std::chrono::milliseconds settle_timeout) {
  return core_->advance_time(by, settle_timeout);
}

std::chrono::steady_clock::time_point System::now() const { return core_->timers().now(); }
std::optional<std::chrono::steady_clock::time_point> System::next_timer() const {
  return core_->timers().next_deadline();
}
void System::kill(std::string reason) { core_->termination().kill(std::move(reason)); }

Addr System::group_addr(std::string_view name) const {
  auto* group = core_->find_group(name);
  return group ? group->addr() : Addr{};
}

detail::GroupRuntime* System::core_group(std::string_view name) const { return core_->find_group(name); }
dumping::DumpStorage* System::dump_storage() const { return core_->dump_storage(); }
std::vector<telemetry::MetricSample> System::scrape_metrics() const {
  return core_->groups().empty() ? std::vector<telemetry::MetricSample>{} : telemetry::scrape(*core_->groups().front());
}

std::size_t System::active_actors() const { return core_->termination().live_actors(); }

std::optional<std::string> System::failure() const { return core_->termination().failure(); }

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
  if (auto failure = system->failure()) {
    fmt::print(stderr, "elfin: the system failed: {}\n", *failure);
    return 1;
  }
  return 0;
}

}  // namespace elfin

namespace elfin::detail {
void terminate_system(SystemCore& system, std::string reason) { system.termination().terminate(std::move(reason)); }
}  // namespace elfin::detail
