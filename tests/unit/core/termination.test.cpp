// System termination: the two stages (polite Terminate, then Terminate::closing() after
// terminate_closing_after, then giving up after terminate_give_up_after) on virtual time, their
// configuration from StartOptions and [system.runtime], user groups before system groups, pending
// restarts abandoned, and the memory tracker terminating a real system.
#include <chrono>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include <elfin/detail/supervisor.hpp>
#include <elfin/elfin.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using namespace std::chrono_literals;
using Lines = std::vector<std::string>;

namespace {

/// TerminationPolicy::manually, and it never closes its mailbox itself.
Task<> deaf(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* t = envelope->get<Terminate>()) journal().add(fmt::format("deaf: terminate: {}", t->reason));
  }
  journal().add("deaf: end");
}

/// On a polite Terminate, asks the keeper (a system group) for a Gate it never answers.
Task<> stuck(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<Terminate>()) continue;
    journal().add("stuck: waiting for the keeper");
    Gate gate{"hold"};
    auto answer = co_await ctx.request(std::move(gate));
    journal().add(answer ? "stuck: answered" : "stuck: " + name_of(answer.error()));
  }
  journal().add("stuck: end");
}

/// Keeps every Gate token unanswered until its mailbox is closed.
Task<> keeper(Context<> ctx) {
  std::vector<ResponseToken<Gate>> held;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Gate>()) held.push_back(envelope->take_token<Gate>());
  }
  journal().add("keeper: end");
}

struct Leave {
  ELFIN_MESSAGE(test_termination, Leave);
};

/// On a polite Terminate, waits a (virtual) second, so every group terminated with it has handled
/// its Terminate, then asks the relay to echo a goodbye and closes its mailbox.
Task<> leaver(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Terminate>()) ctx.attach(Delay(1s, Leave{}));
    if (!envelope->is<Leave>()) continue;
    auto answer = co_await ctx.request(Echo{"goodbye"});
    journal().add(answer ? "leaver: " + *answer : "leaver: " + name_of(answer.error()));
    ctx.close();
  }
  journal().add("leaver: end");
}

/// Echoes texts.
Task<> relay(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Echo>()) ctx.respond(envelope->take_token<Echo>(), envelope->get<Echo>()->text);
  }
  journal().add("relay: end");
}

/// Fails on Boom.
Task<> fragile(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Boom>()) throw std::runtime_error("down for an hour");
  }
}

StartOptions virtual_options() {
  StartOptions options;
  options.workers = 2;
  options.virtual_time = true;
  return options;
}

System start_deaf(StartOptions options) {
  Topology topology;
  topology.local("deaf").mount(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(deaf));
  return start_or_fail(std::move(topology), std::move(options));
}

/// Runs `deaf` until terminated, and returns how long (virtual) its polite stage lasted: whole
/// seconds until `deaf: end` appears.
std::chrono::seconds polite_stage_of(System& system) {
  REQUIRE(eventually([&] { return system.active_actors() == 1; }));
  system.terminate("shutting down");
  std::chrono::seconds waited{0};
  while (!journal().wait_for_line("deaf: end", 0ms) && waited < 120s) {
    REQUIRE(system.advance_time(1s));
    ++waited;
  }
  return waited;
}

}  // namespace

TEST_CASE("an actor that ignores a polite Terminate gets Terminate::closing() 30 s later, on virtual time",
          "[core][termination]") {
  journal().clear();
  auto system = start_deaf(virtual_options());
  REQUIRE(eventually([&] { return system.active_actors() == 1; }));
  system.terminate("shutting down");
  REQUIRE(system.advance_time(30s - 1ms));
  CHECK(journal().lines() == Lines{"deaf: terminate: shutting down"});
  CHECK_FALSE(system.join_for(0ms));
  REQUIRE(system.advance_time(1ms));
  REQUIRE(journal().wait_for_line("deaf: end"));
  CHECK(system.join_for(kDeadline));
  // Terminate::closing() closed the mailbox: the actor never saw it.
  CHECK(journal().lines() == Lines{"deaf: terminate: shutting down", "deaf: end"});
}

TEST_CASE("termination stage timeouts come from StartOptions, else [system.runtime], else 30 s",
          "[core][termination]") {
  journal().clear();
  StartOptions options = virtual_options();
  SECTION("the default") {
    auto system = start_deaf(options);
    CHECK(polite_stage_of(system) == 30s);
  }
  SECTION("[system.runtime] terminate_closing_after") {
    options.config_toml = "[system.runtime]\nterminate_closing_after = \"5s\"";
    auto system = start_deaf(options);
    CHECK(polite_stage_of(system) == 5s);
  }
  SECTION("StartOptions win over the config") {
    options.config_toml = "[system.runtime]\nterminate_closing_after = \"5s\"";
    options.terminate_closing_after = 8s;
    auto system = start_deaf(options);
    CHECK(polite_stage_of(system) == 8s);
  }
  SECTION("a bad value stops the start") {
    options.config_toml = "[system.runtime]\nterminate_give_up_after = 15";
    Topology topology;
    topology.local("deaf").mount(ActorGroup().exec(deaf));
    auto system = System::start(std::move(topology), options);
    REQUIRE_FALSE(system);
    CHECK_THAT(system.error().message(), Catch::Contains("[system.runtime]"));
  }
}

TEST_CASE("termination gives up on an actor stuck past Terminate::closing() after 15 more s, then stops system groups",
          "[core][termination]") {
  journal().clear();
  Topology topology;
  auto s = topology.local("stuck");
  auto k = topology.local("system.keeper");
  s.route_to(k, filters::messages<Gate>());
  s.mount(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(stuck));
  k.mount(ActorGroup().exec(keeper));
  auto system = start_or_fail(std::move(topology), virtual_options());
  REQUIRE(eventually([&] { return system.active_actors() == 2; }));
  system.terminate("bye");
  REQUIRE(system.advance_time(45s - 1ms));
  // Closing came at 30 s, but the actor waits on a request, so it is still there; the system
  // group it waits on has not been asked to stop.
  CHECK(journal().lines() == Lines{"stuck: waiting for the keeper"});
  REQUIRE(system.advance_time(1ms));
  // Given up on: the system phase begins, the keeper stops, and its dropped tokens free the actor.
  REQUIRE(journal().wait_for_line("stuck: end"));
  CHECK(system.join_for(kDeadline));
  CHECK(journal().lines() == Lines{"stuck: waiting for the keeper", "keeper: end", "stuck: Ignored", "stuck: end"});
}

TEST_CASE("a group built with stop_with_system_groups() stops after the user groups, which reach it while they stop",
          "[core][termination]") {
  for (bool with_system : {true, false}) {
    journal().clear();
    Topology topology;
    auto l = topology.local("leaver");
    auto r = topology.local("relay");
    l.route_to(r, filters::messages<Echo>());
    l.mount(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(leaver));
    r.mount(with_system ? ActorGroup().stop_with_system_groups().exec(relay) : ActorGroup().exec(relay));
    auto system = start_or_fail(std::move(topology), virtual_options());
    REQUIRE(eventually([&] { return system.active_actors() == 2; }));
    system.terminate("bye");
    REQUIRE(system.advance_time(1s));
    CHECK(system.join_for(kDeadline));
    INFO("stop_with_system_groups: " << with_system);
    if (with_system) {
      CHECK(journal().lines() == Lines{"leaver: goodbye", "leaver: end", "relay: end"});
    } else {
      // Terminated together, the relay's mailbox closed at once: the leaver's request fails.
      CHECK(journal().lines() == Lines{"relay: end", "leaver: Failed", "leaver: end"});
    }
  }
}

TEST_CASE("termination abandons actors waiting for a restart; requests queued for them fail", "[core][termination]") {
  testing::ProxyOptions options;
  options.virtual_time = true;
  auto proxy = testing::proxy(
      ActorGroup().restart_policy(RestartPolicy::on_failure(RestartParams{1h, 2h})).exec(fragile), {}, options);
  proxy.send(Increment{});
  proxy.sync();
  proxy.send(Boom{"x"});
  REQUIRE(eventually([&] { return proxy.system().core_group("subject")->restarting_actors() == 1; }));
  auto requester = proxy.subproxy();
  Result<std::string, RequestError> answer = Err{RequestError::Ignored};
  std::thread asking([&] { answer = requester.request_fallible(Echo{"anyone?"}); });
  auto* group = static_cast<detail::Supervisor<NoConfig, Singleton>*>(proxy.system().core_group("subject"));
  REQUIRE(eventually([&] { return group->actor(Singleton{}, false)->mailbox().size() == 1; }));
  proxy.system().terminate("no more restarts");
  asking.join();
  CHECK(describe(answer) == "err:Failed");
  CHECK(proxy.system().core_group("subject")->restarting_actors() == 0);
  CHECK(proxy.system().join_for(kDeadline));
}

// --- the memory tracker (real /proc/meminfo, real time) ----------------------------------------

TEST_CASE("the memory tracker terminates the system gracefully when memory use is above its threshold",
          "[core][termination]") {
  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = "[system.runtime]\nmemory_threshold = 0.000001\nmemory_check_interval = \"10ms\"";
  options.terminate_closing_after = 50ms;
  auto system = start_deaf(options);
  REQUIRE(system.join_for(kDeadline));
  const Lines lines = journal().lines();
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::StartsWith("deaf: terminate: resident memory"));
  CHECK_THAT(lines[0], Catch::Contains("above the threshold of 0.0001%"));
}

TEST_CASE("memory tracker settings that make no sense stop the start", "[core][termination]") {
  auto start_with = [](const std::string& runtime) {
    Topology topology;
    topology.local("deaf").mount(ActorGroup().exec(deaf));
    StartOptions options = quick_options();
    options.config_toml = "[system.runtime]\n" + runtime;
    auto system = System::start(std::move(topology), options);
    return system ? std::string("started") : system.error().message();
  };
  CHECK_THAT(start_with("memory_check_interval = \"0s\""), Catch::Contains("memory_check_interval must be positive"));
  CHECK_THAT(start_with("memory_threshold = 0.0"), Catch::Contains("memory_threshold must be above 0"));
  CHECK(start_with("memory_threshold = 0.5") == "started");
}

TEST_CASE("the memory tracker leaves a system alone below its threshold", "[core][termination]") {
  journal().clear();
  StartOptions options = quick_options();
  options.memory_threshold = 1.0;
  options.terminate_closing_after = 50ms;
  options.memory_check_interval = 1ms;
  auto system = start_deaf(options);
  // Many checks run in this time; none may start termination.
  CHECK_FALSE(system.join_for(200ms));
  CHECK(journal().lines().empty());
}
