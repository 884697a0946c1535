// Logging end to end: actors' records and runtime events through the logger into a real file, with
// the per-group level, the rate limit and the counters of limited and lost records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>

#include <elfin/logger/logger.hpp>
#include <elfin/logging.hpp>

#include "../core/test_support.hpp"
#include "../temp_dir.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Talk {
  std::uint32_t infos = 1;
  std::uint32_t warns = 0;
  bool fail = false;
  ELFIN_MESSAGE(logger_test, Talk, infos, warns, fail);
};

struct TalkerConfig {
  std::uint32_t infos = 1;
  std::uint32_t warns = 0;
  bool fail = false;
  ELFIN_CONFIG(infos, warns, fail);
};

Task<> talker(Context<TalkerConfig> ctx) {
  journal().add("started");
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    for (std::uint32_t i = 0; i < ctx.config().infos; ++i) log::info("incremented value={}", i);
    for (std::uint32_t i = 0; i < ctx.config().warns; ++i) log::warn("careful {}", i);
    log::debug("never at the default level");
    journal().add("talked");
    if (ctx.config().fail) throw std::runtime_error("boom");
  }
}

Task<> idle(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

Topology talking() {
  Topology topology;
  topology.local("talkers").mount(ActorGroup().config<TalkerConfig>().exec(talker)).entrypoint();
  topology.local("system.loggers").mount(logger::blueprint());
  topology.local("system.telemeters").mount(ActorGroup().exec(idle));  // turns the counters on
  return topology;
}

struct Run {
  std::vector<std::string> lines;
  std::vector<telemetry::MetricSample> metrics;
};

/// Runs `talking()` with `config` until the talkers have talked (or, with `starts`, have been
/// started that many times).
Run run(const std::string& config, unsigned workers = 2, std::ptrdiff_t starts = 0) {
  TempDir dir;
  auto path = dir.file("app.log");
  journal().clear();
  StartOptions options = quick_options(workers);
  options.config_toml = fmt::format("[system.loggers]\nsink = \"file\"\npath = \"{}\"\n{}", path, config);
  auto system = System::start(talking(), std::move(options));
  REQUIRE(system.ok());
  if (starts == 0) {
    CHECK(journal().wait_for_line("talked"));
  } else {
    CHECK(
        journal().wait([&](const auto& lines) { return std::count(lines.begin(), lines.end(), "started") >= starts; }));
  }
  Run out;
  out.metrics = system->scrape_metrics();
  system->terminate("test over");
  system->join();  // the logger writes what it has before it stops
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.lines.push_back(line);
  return out;
}

double counter(const std::vector<telemetry::MetricSample>& samples, const std::string& name, const std::string& level) {
  for (const auto& s : samples) {
    if (s.name == name && s.labels == std::vector<std::pair<std::string, std::string>>{{"level", level}})
      return s.value;
  }
  return -1;
}

}  // namespace

TEST_CASE("an actor's records reach the log file as one line each, with time, level, trace and actor", "[logger]") {
  auto result = run("[talkers]\ninfos = 2\n");
  REQUIRE(result.lines.size() == 2);
  std::regex line(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO \[[1-9]\d*\] talkers/_ - incremented value=0$)");
  CHECK(std::regex_match(result.lines[0], line));
  CHECK_THAT(result.lines[1], Catch::EndsWith("incremented value=1"));
}

TEST_CASE("system.logging.max_level skips more verbose records", "[logger]") {
  auto result = run("[talkers]\ninfos = 3\nwarns = 2\n[talkers.system.logging]\nmax_level = \"Warn\"\n");
  REQUIRE(result.lines.size() == 2);
  CHECK_THAT(result.lines[0], Catch::Contains(" WARN [") && Catch::EndsWith("careful 0"));
}

TEST_CASE("runtime events go to the logger too, under the trace the actor was handling", "[logger]") {
  auto result = run("[talkers]\nfail = true\n");
  const std::regex failure(R"(.* ERROR \[[1-9]\d*\] talkers/_ - actor failed: boom$)");
  bool failed = std::any_of(result.lines.begin(), result.lines.end(),
                            [&](const std::string& l) { return std::regex_match(l, failure); });
  CHECK(failed);
}

TEST_CASE("a group's max_level applies to the runtime's records about it too", "[logger]") {
  // A talker that fails, restarted 1 ms later: the runtime logs the failure (Error) and the
  // restart (Info, before the second start) under the talkers' group. `auto_reset` keeps a slow
  // first start from counting as healthy (which restarts at once, without that record).
  const std::string restarting =
      "[talkers]\nfail = true\n[talkers.system.restart_policy]\nwhen = \"OnFailure\"\nmin_backoff = \"1ms\"\n"
      "max_backoff = \"1ms\"\nauto_reset = \"1h\"\n";
  auto contains = [](const Run& run, const std::string& text) {
    return std::any_of(run.lines.begin(), run.lines.end(),
                       [&](const std::string& line) { return line.find(text) != std::string::npos; });
  };
  auto verbose = run(restarting, 2, 2);
  CHECK(contains(verbose, "INFO"));
  CHECK(contains(verbose, "restarting in"));
  auto quiet = run(restarting + "[talkers.system.logging]\nmax_level = \"Error\"\n", 2, 2);
  CHECK(contains(quiet, "actor failed: boom"));
  CHECK_FALSE(contains(quiet, "restarting in"));
}

TEST_CASE("records over max_rate_per_level are dropped and counted as limited", "[logger]") {
  // 5 per second: a burst of 20 keeps the first 5 (one second's worth).
  auto result = run("[talkers]\ninfos = 20\n[talkers.system.logging]\nmax_rate_per_level = 5\n");
  CHECK(result.lines.size() == 5);
  CHECK(counter(result.metrics, "elfin_limited_events_total", "Info") == 15);
  CHECK(counter(result.metrics, "elfin_emitted_events_total", "Info") == 5);
}

TEST_CASE("records the logger has no room for are lost, counted, and never block the actor", "[logger]") {
  // One worker: the talker's burst runs to its end before the logger runs again, and the logger's
  // mailbox holds a single record.
  auto result = run("[talkers]\ninfos = 50\n[system.loggers.system.mailbox]\ncapacity = 1\n", 1);
  const double lost = counter(result.metrics, "elfin_lost_events_total", "Info");
  CHECK(lost > 0);
  CHECK(static_cast<double>(result.lines.size()) + lost == 50);
}

TEST_CASE("log levels parse from config text", "[logger]") {
  CHECK(parse_log_level("warn").value() == LogLevel::Warn);
  CHECK(parse_log_level("TRACE").value() == LogLevel::Trace);
  CHECK_THAT(parse_log_level("loud").error().message(), Catch::Contains("unknown log level \"loud\""));
}

TEST_CASE("a relative log path is taken relative to the config file that names it", "[logger]") {
  TempDir dir;
  const auto config = dir.write("node.toml", "[system.loggers]\nsink = \"file\"\npath = \"app.log\"\n");
  journal().clear();
  StartOptions options = quick_options();
  options.config_path = config;  // the test runs elsewhere: a path relative to the cwd would miss
  auto system = System::start(talking(), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("talked"));
  system->terminate("test over");
  system->join();
  std::ifstream in(dir.file("app.log"));
  std::string first;
  CHECK(std::getline(in, first));
  CHECK_FALSE(first.empty());
}
