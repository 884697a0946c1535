// The configurer: start-up validation and distribution, reload (valid, invalid, forced), a
// group's own ValidateConfig, and a `with_state` router rebuilt from the reloaded config.
//
// Each test writes a real config file, starts a topology with `system.configurers` as its
// entrypoint, rewrites the file and asks the configurer to reload, as SIGHUP would.
#include <catch2/catch.hpp>

#include <csignal>

#include <elfin/configurer.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "../core/test_protocol.hpp"
#include "../core/test_support.hpp"
#include "../temp_dir.hpp"

using namespace elfin;
using namespace elfin::test;
using elfin::configurer::ReloadConfigs;
using elfin::configurer::ReloadReport;
using Key = std::uint64_t;
using Lines = std::vector<std::string>;

namespace {

struct StepConfig {
  std::uint32_t step = 1;
  std::uint32_t limit = 100;
  ELFIN_CONFIG(step, limit);
};

/// GetValue answers the configured step; Echo answers how many ConfigUpdated it has seen.
Task<> stepper(Context<StepConfig> ctx) {
  std::uint64_t updates = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<ConfigUpdated>()) ++updates;
    co_await handle(
        *envelope,
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), ctx.config().step); },
        [&](const Echo&, ResponseToken<Echo> token) { ctx.respond(std::move(token), std::to_string(updates)); },
        [&](const ValidateConfig& validate, ResponseToken<ValidateConfig> token) {
          // A group that validates its config beyond types: step must not exceed limit.
          auto next = validate.config.decode<StepConfig>();
          std::string verdict;
          if (next && next->step > next->limit)
            verdict = fmt::format("step {} exceeds limit {}", next->step, next->limit);
          ctx.respond(std::move(token), verdict);
        });
  }
}

Blueprint steppers() { return ActorGroup().config<StepConfig>().exec(stepper); }

/// The same group, with a router that hands ValidateConfig to its actor (groups opt in).
Blueprint validating_steppers() {
  return ActorGroup()
      .config<StepConfig>()
      .router(MapRouter<Singleton>([](const Envelope& e) {
        if (e.is<Terminate>() || e.is<Ping>()) return Outcome<Singleton>::GentleUnicast(Singleton{});
        return Outcome<Singleton>::Unicast(Singleton{});
      }))
      .exec(stepper);
}

// Keyed{key} goes to actor `key + step`: the router's state comes from the config.
struct Offset {
  std::uint64_t by = 0;
};
Task<> keyed_reporter(Context<StepConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Keyed>()) std::ignore = ctx.unbounded_send(Seen{ctx.key(), "keyed"});
  }
}
Blueprint offset_group() {
  return ActorGroup()
      .config<StepConfig>()
      .router(MapRouter<Key>::with_state<StepConfig, Offset>(
          [](const StepConfig& config, const Offset&) { return Offset{config.step}; },
          [](const Envelope& e, const Offset& offset) {
            if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key + offset.by);
            return Outcome<Key>::Default();
          }))
      .exec(keyed_reporter);
}

Topology with_configurer(Blueprint counters, Blueprint others) {
  Topology topology;
  topology.local("system.configurers").mount(configurer::blueprint()).entrypoint();
  topology.local("counters").mount(std::move(counters));
  topology.local("others").mount(std::move(others));
  return topology;
}

StartOptions from_file(const std::string& path) {
  StartOptions options = quick_options();
  options.config_path = path;
  return options;
}

ReloadReport reload(testing::Proxy& proxy, ReloadConfigs request = {}) {
  return proxy.request_fallible(request, proxy.system().group_addr("system.configurers")).value();
}

std::uint64_t step_of(testing::Proxy& proxy, const char* group) {
  return proxy.request_fallible(GetValue{}, proxy.system().group_addr(group)).value();
}

}  // namespace

TEST_CASE("the configurer starts the groups that are not entrypoints with their configs", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 3\n[others]\nstep = 4\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));
  CHECK(step_of(proxy, "counters") == 3);
  CHECK(step_of(proxy, "others") == 4);
  // Started by the configurer's UpdateConfig, not by the request: the actor saw one ConfigUpdated.
  CHECK(eventually([&] { return proxy.request(Echo{}) == "1"; }));
}

TEST_CASE("a reload applies the new config to the groups whose section changed", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n[others]\nstep = 5\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));
  CHECK(step_of(proxy, "counters") == 1);

  dir.write("node.toml", "[counters]\nstep = 20\n[others]\nstep = 5\n");
  auto report = reload(proxy);
  CHECK(report.accepted);
  CHECK(report.updated == Lines{"counters"});
  CHECK(step_of(proxy, "counters") == 20);
  CHECK(step_of(proxy, "others") == 5);
  CHECK(proxy.request_fallible(Echo{}, proxy.system().group_addr("others")).value() == "1");  // not updated
}

TEST_CASE("an invalid config on reload is rejected as a whole and the running configs stay", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n[others]\nstep = 5\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));

  SECTION("a value of the wrong type") {
    dir.write("node.toml", "[counters]\nstep = 2\n[others]\nstep = \"six\"\n");
    auto report = reload(proxy);
    CHECK_FALSE(report.accepted);
    CHECK_THAT(report.reason, Catch::Contains(path + ":4: [others] step: expected a non-negative integer, got a "
                                                     "string (\"six\")"));
  }
  SECTION("malformed TOML") {
    dir.write("node.toml", "[counters]\nstep = 2\n[others\n");
    auto report = reload(proxy);
    CHECK_FALSE(report.accepted);
    CHECK_THAT(report.reason, Catch::Contains(path + ":3") && Catch::Contains("invalid TOML"));
  }
  SECTION("a missing file") {
    std::filesystem::remove(path);
    auto report = reload(proxy);
    CHECK_FALSE(report.accepted);
    CHECK_THAT(report.reason, Catch::Contains(path) && Catch::Contains("cannot read the config file"));
  }
  CHECK(step_of(proxy, "counters") == 1);  // the valid part was not applied either
  CHECK(step_of(proxy, "others") == 5);
}

TEST_CASE("a forced reload updates every group even when nothing changed", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n[others]\nstep = 5\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));
  CHECK(eventually([&] { return proxy.request(Echo{}) == "1"; }));

  SECTION("unforced: nothing to do") {
    auto report = reload(proxy);
    CHECK(report.accepted);
    CHECK(report.updated.empty());
    CHECK(proxy.request(Echo{}) == "1");
  }
  SECTION("forced: every group gets UpdateConfig") {
    auto report = reload(proxy, ReloadConfigs::forcing());
    CHECK(report.accepted);
    CHECK_THAT(report.updated, Catch::VectorContains(std::string("counters")) &&
                                   Catch::VectorContains(std::string("others")) &&
                                   Catch::VectorContains(std::string("system.configurers")));
    CHECK(proxy.request(Echo{}) == "2");
  }
}

TEST_CASE("a group that rejects its config in ValidateConfig stops the whole reload", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n[others]\nstep = 5\n");
  auto proxy = testing::proxy(with_configurer(validating_steppers(), steppers()), "counters", from_file(path));
  CHECK(step_of(proxy, "counters") == 1);

  dir.write("node.toml", "[counters]\nstep = 500\n[others]\nstep = 6\n");
  auto report = reload(proxy);
  CHECK_FALSE(report.accepted);
  CHECK_THAT(report.reason, Catch::Contains("[counters] rejected the config: step 500 exceeds limit 100"));
  CHECK(step_of(proxy, "counters") == 1);
  CHECK(step_of(proxy, "others") == 5);

  dir.write("node.toml", "[counters]\nstep = 50\n[others]\nstep = 6\n");
  CHECK(reload(proxy).accepted);
  CHECK(step_of(proxy, "counters") == 50);
  CHECK(step_of(proxy, "others") == 6);
}

TEST_CASE("a config rejected by a group at start-up terminates the system as failed", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 500\n");
  auto system = System::start(with_configurer(validating_steppers(), steppers()), from_file(path));
  REQUIRE(system.ok());
  REQUIRE(system->join_for(kDeadline));
  REQUIRE(system->failure().has_value());
  CHECK_THAT(*system->failure(), Catch::Contains("[counters] rejected the config: step 500 exceeds limit 100"));
}

TEST_CASE("a with_state router is rebuilt from the reloaded config", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 10\n");
  auto proxy = testing::proxy(with_configurer(offset_group(), steppers()), "counters", from_file(path));
  proxy.send(Keyed{1, {}, ""});
  CHECK(recv_seen(proxy, 1) == Lines{"11:keyed"});

  dir.write("node.toml", "[counters]\nstep = 100\n");
  REQUIRE(reload(proxy).accepted);
  proxy.send(Keyed{1, {}, ""});
  CHECK(recv_seen(proxy, 1) == Lines{"101:keyed"});
}

TEST_CASE("a reload reports unknown keys as warnings and still applies", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));
  dir.write("node.toml", "[counters]\nstep = 2\nstpe = 3\n[countres]\nstep = 4\n");
  auto report = reload(proxy);
  CHECK(report.accepted);
  CHECK_THAT(report.warnings, Catch::VectorContains(path + ":3: [counters] stpe: unknown key"));
  CHECK_THAT(report.warnings,
             Catch::VectorContains(path + ":4: [countres]: no group of the topology is named `countres`; the "
                                          "section is not used"));
  CHECK(step_of(proxy, "counters") == 2);
}

TEST_CASE("elfin::run returns 1 when the configurer rejects the config at start-up", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 500\n");
  CHECK(elfin::run(with_configurer(validating_steppers(), steppers()), from_file(path)) == 1);
}

TEST_CASE("SIGHUP reloads the changed groups and SIGUSR2 forces a reload of all", "[configurer]") {
  TempDir dir;
  auto path = dir.write("node.toml", "[counters]\nstep = 1\n[others]\nstep = 5\n");
  auto proxy = testing::proxy(with_configurer(steppers(), steppers()), "counters", from_file(path));
  // The configurer attached its Signal sources before it started the other groups, so once a
  // group has run, a raised SIGHUP is a message to the configurer, not the default (exit).
  REQUIRE(eventually([&] { return proxy.request(Echo{}) == "1"; }));

  dir.write("node.toml", "[counters]\nstep = 20\n[others]\nstep = 5\n");
  REQUIRE(std::raise(SIGHUP) == 0);
  CHECK(eventually([&] { return step_of(proxy, "counters") == 20; }));
  CHECK(proxy.request(Echo{}) == "2");
  CHECK(proxy.request_fallible(Echo{}, proxy.system().group_addr("others")).value() == "1");  // unchanged

  REQUIRE(std::raise(SIGUSR2) == 0);
  CHECK(eventually([&] { return proxy.request_fallible(Echo{}, proxy.system().group_addr("others")).value() == "2"; }));
  CHECK(proxy.request(Echo{}) == "3");
}
