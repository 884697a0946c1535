// Supervision: restart policies and their precedence, the backoff formula (pure and through a
// running group under virtual time), max_retries, auto_reset, messages kept across a restart,
// start_info and trace ids of restarted actors, and status subscriptions.
#include <chrono>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include <elfin/detail/restart_backoff.hpp>
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
using Key = std::uint64_t;

namespace {

std::string cause_of(const ActorStartInfo& info) {
  return info.is_restart() ? fmt::format("restarted#{}", info.attempt) : "spawned";
}

/// Reports its start, then handles: Increment (reported with its lifecycle), Echo (answered with
/// the text and its lifecycle), Start (returns normally), Boom (throws, except for "never",
/// "on_failure" and "group", which set this lifecycle's restart policy).
Task<> phoenix(Context<> ctx) {
  const std::string me = cause_of(ctx.start_info());
  Seen started{ctx.start_info().attempt, "started:" + me, ctx.trace_id().raw()};
  std::ignore = ctx.unbounded_send(started);
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* boom = envelope->get<Boom>()) {
      if (boom->why == "never") {
        ctx.set_restart_policy(RestartPolicy::never());
        continue;
      }
      if (boom->why == "group") {
        ctx.set_restart_policy(std::nullopt);
        continue;
      }
      if (boom->why == "on_failure") {
        ctx.set_restart_policy(RestartPolicy::on_failure(RestartParams{4s, 36s}));
        continue;
      }
      throw std::runtime_error("boom: " + boom->why);
    }
    if (envelope->is<Start>()) co_return;
    if (const auto* inc = envelope->get<Increment>()) {
      Seen seen{inc->delta, "inc by " + me, 0};
      std::ignore = ctx.unbounded_send(seen);
    }
    if (envelope->is<Echo>()) {
      std::string text = envelope->get<Echo>()->text + " from " + me;
      ctx.respond(envelope->take_token<Echo>(), std::move(text));
    }
  }
}

/// Fails as soon as it starts, after saying so.
Task<> crasher(Context<> ctx) {
  Seen started{ctx.start_info().attempt, "started:" + cause_of(ctx.start_info()), 0};
  std::ignore = ctx.unbounded_send(started);
  throw std::runtime_error("crashes at once");
  co_return;  // NOLINT: makes this a coroutine
}

RestartParams params_4_36() { return RestartParams{4s, 36s}; }

testing::Proxy virtual_proxy(Blueprint blueprint, std::string config = {}) {
  testing::ProxyOptions options;
  options.virtual_time = true;
  return testing::proxy(std::move(blueprint), std::move(config), options);
}

/// The "started:..." lines queued for the proxy right now (anything else fails the test).
Lines starts(testing::Proxy& proxy) {
  Lines out;
  for (const auto& line : drain_seen(proxy)) {
    out.push_back(line.substr(line.find(':') + 1));
  }
  return out;
}

/// The messages queued in the singleton subject's mailbox (0 if it has no actor).
std::size_t subject_mailbox(testing::Proxy& proxy) {
  auto* group = static_cast<detail::Supervisor<NoConfig, Singleton>*>(proxy.system().core_group("subject"));
  auto cell = group->actor(Singleton{}, false);
  return cell ? cell->mailbox().size() : 0;
}

}  // namespace

// --- the backoff, as pure functions ------------------------------------------------------------

TEST_CASE("RestartParams::delay follows the book: factor 2, min 4, max 36 gives 4, 8, 16, 32, 36",
          "[core][supervision]") {
  const RestartParams params = params_4_36();
  std::vector<std::chrono::seconds> delays;
  delays.reserve(6);
  for (std::uint64_t power = 0; power < 6; ++power) {
    delays.push_back(std::chrono::duration_cast<std::chrono::seconds>(params.delay(power)));
  }
  CHECK(delays == std::vector<std::chrono::seconds>{4s, 8s, 16s, 32s, 36s, 36s});
  CHECK(params.factor() == 2.0);
  CHECK(params.auto_reset() == 4s);
  CHECK(params.max_retries() == std::numeric_limits<std::uint64_t>::max());
  CHECK(params.delay(5000) == 36s);  // overflow is capped, never garbage
  CHECK(params.factor(3.0).delay(2) == 36s);
  CHECK(params.factor(1.5).delay(1) == 6s);
}

TEST_CASE("RestartBackoff: quick failures back off, a healthy life restarts at once, max_retries stops",
          "[core][supervision]") {
  detail::RestartBackoff backoff;
  const RestartParams params = params_4_36().max_retries(3);
  using Delay = std::optional<std::chrono::nanoseconds>;
  CHECK(backoff.next(params, 0s) == Delay{4s});
  CHECK(backoff.attempt() == 1);
  CHECK(backoff.next(params, 1s) == Delay{8s});
  CHECK(backoff.next(params, 3s) == Delay{16s});
  CHECK(backoff.next(params, 0s) == std::nullopt);  // three quick restarts were the limit
  CHECK(backoff.next(params, 4s) == Delay{0s});     // lived auto_reset: at once, a new series
  CHECK(backoff.attempt() == 1);
  CHECK(backoff.next(params, 0s) == Delay{4s});  // and the power starts from 0 again
  CHECK(backoff.attempt() == 2);
}

// --- restarts through a running group, under virtual time --------------------------------------

TEST_CASE("an always-restarted actor that fails at once comes back after 4, 8, 16, 32, 36 s of virtual time",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::always(params_4_36())).exec(crasher));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  std::uint64_t attempt = 0;
  for (auto delay : {4s, 8s, 16s, 32s, 36s, 36s}) {
    ++attempt;
    proxy.advance(delay - 1ms);
    INFO("attempt " << attempt << " after " << delay.count() << " s");
    CHECK(starts(proxy).empty());
    proxy.advance(1ms);
    CHECK(starts(proxy) == Lines{fmt::format("started:restarted#{}", attempt)});
  }
}

TEST_CASE("RestartPolicy::never (the default) leaves a failed actor down; a later message starts a new one",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.send(Boom{"once"});
  proxy.advance(1h);
  CHECK(starts(proxy).empty());
  proxy.send(Increment{5});
  CHECK(recv_seen(proxy, 2) == Lines{"0:started:spawned", "5:inc by spawned"});
}

TEST_CASE("RestartPolicy::on_failure restarts after a failure but not after a normal return", "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36())).exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.send(Boom{"fail"});
  proxy.advance(4s);
  CHECK(starts(proxy) == Lines{"started:restarted#1"});
  proxy.send(Start{});  // returns normally
  proxy.advance(1h);
  CHECK(starts(proxy).empty());
}

TEST_CASE("RestartPolicy::always restarts after a normal return too, a long life restarting at once",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::always(params_4_36())).exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.advance(10s);   // a healthy life (auto_reset = min_backoff = 4 s)
  proxy.send(Start{});  // returns normally: restarted at once, without any time passing
  CHECK(recv_seen(proxy, 1) == Lines{"1:started:restarted#1"});
}

TEST_CASE("max_retries: after that many quick restarts in a row the actor stays down", "[core][supervision]") {
  auto proxy =
      virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36().max_retries(2))).exec(crasher));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.advance(4s);
  CHECK(starts(proxy) == Lines{"started:restarted#1"});
  proxy.advance(8s);
  CHECK(starts(proxy) == Lines{"started:restarted#2"});
  proxy.advance(1h);
  CHECK(starts(proxy).empty());
  CHECK(proxy.system().active_actors() == 1);  // the proxy itself
}

TEST_CASE("auto_reset: a life of auto_reset restarts at once and starts the backoff over", "[core][supervision]") {
  auto proxy = virtual_proxy(
      ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36().auto_reset(10s))).exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.send(Boom{"quick"});
  proxy.advance(4s);
  CHECK(starts(proxy) == Lines{"started:restarted#1"});
  proxy.send(Boom{"quick again"});
  proxy.advance(8s);
  CHECK(starts(proxy) == Lines{"started:restarted#2"});
  SECTION("a life shorter than auto_reset keeps backing off") {
    proxy.advance(9s);
    proxy.send(Boom{"after 9 s"});
    proxy.advance(16s - 1ms);
    CHECK(starts(proxy).empty());
    proxy.advance(1ms);
    CHECK(starts(proxy) == Lines{"started:restarted#3"});
  }
  SECTION("a life of auto_reset restarts at once as the first retry, then backs off from min_backoff") {
    proxy.advance(10s);
    proxy.send(Boom{"after 10 s"});
    CHECK(recv_seen(proxy, 1) == Lines{"1:started:restarted#1"});
    proxy.send(Boom{"quick"});
    proxy.advance(4s - 1ms);
    CHECK(starts(proxy).empty());
    proxy.advance(1ms);
    CHECK(starts(proxy) == Lines{"started:restarted#2"});
  }
}

TEST_CASE("messages sent to an actor waiting to restart are kept and handled by the restarted actor",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36())).exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.send(Boom{"down for 4 s"});
  REQUIRE(eventually([&] { return proxy.system().core_group("subject")->restarting_actors() == 1; }));
  // It waits for its restart now: these neither spawn another actor nor get lost.
  proxy.send(Increment{7});
  auto requester = proxy.subproxy();
  Result<std::string, RequestError> answer = Err{RequestError::Failed};
  std::thread asking([&] { answer = requester.request_fallible(Echo{"hello"}); });
  REQUIRE(eventually([&] { return subject_mailbox(proxy) == 2; }));
  proxy.advance(4s);
  asking.join();
  CHECK(drain_seen(proxy) == Lines{"1:started:restarted#1", "7:inc by restarted#1"});
  CHECK(describe(answer) == "ok:hello from restarted#1");
}

TEST_CASE("proxy.sync under virtual time while the actor waits for its restart names sync and advance",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36())).exec(phoenix));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.send(Boom{"down for 4 s"});
  REQUIRE(eventually([&] { return proxy.system().core_group("subject")->restarting_actors() == 1; }));
  proxy.set_timeout(200ms);
  std::string error;
  try {
    proxy.sync();
  } catch (const testing::ProxyError& e) {
    error = e.what();
  }
  CHECK_THAT(error, Catch::Matchers::StartsWith("proxy.sync") && Catch::Matchers::Contains("proxy.advance"));
  proxy.set_timeout(5s);
  proxy.advance(4s);
  proxy.sync();  // the restarted actor answers the Ping
  CHECK(drain_seen(proxy) == Lines{"1:started:restarted#1"});
}

TEST_CASE("a restarted actor starts a new trace and knows it was restarted", "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36())).exec(phoenix));
  const auto first = proxy.recv_as<Seen>();
  const TraceId boom_trace = TraceId::generate();
  proxy.set_trace_id(boom_trace);
  proxy.send(Boom{"again"});
  proxy.advance(4s);
  const auto second = proxy.recv_as<Seen>();
  CHECK(first.what == "started:spawned");
  CHECK(second.what == "started:restarted#1");
  CHECK(second.trace != 0);
  CHECK(second.trace != first.trace);
  CHECK(second.trace != boom_trace.raw());  // not the trace of the Boom that felled it
}

namespace {
/// The first lifecycle attaches a one-second Interval; every lifecycle reports the ticks it gets.
Task<> ticking(Context<> ctx) {
  const std::string me = cause_of(ctx.start_info());
  if (!ctx.start_info().is_restart()) {
    auto interval = ctx.attach(Interval(Tick{}));
    interval.start(1s);
  }
  Seen started{0, "started:" + me, 0};
  std::ignore = ctx.unbounded_send(started);
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Boom>()) throw std::runtime_error("boom");
    if (envelope->is<Tick>()) {
      Seen tick{0, "tick in " + me, 0};
      std::ignore = ctx.unbounded_send(tick);
    }
  }
}
}  // namespace

TEST_CASE("sources attached by an actor stop with it; its restarted successor does not get them",
          "[core][supervision]") {
  auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::on_failure(params_4_36())).exec(ticking));
  REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
  proxy.advance(2s);
  CHECK(drain_seen(proxy) == Lines{"0:tick in spawned", "0:tick in spawned"});
  proxy.send(Boom{"x"});
  proxy.advance(30s);
  CHECK(drain_seen(proxy) == Lines{"0:started:restarted#1"});
}

// --- precedence --------------------------------------------------------------------------------

TEST_CASE("restart policy precedence: ctx.set_restart_policy > config > blueprint", "[core][supervision]") {
  const std::string always = "[system.restart_policy]\nwhen = \"Always\"\nmin_backoff = \"4s\"\nmax_backoff = \"36s\"";
  SECTION("config Always beats the blueprint's never") {
    auto proxy = virtual_proxy(ActorGroup().exec(phoenix), always);
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.send(Boom{"x"});
    proxy.advance(4s);
    CHECK(starts(proxy) == Lines{"started:restarted#1"});
  }
  SECTION("config Never beats the blueprint's always") {
    auto proxy = virtual_proxy(ActorGroup().restart_policy(RestartPolicy::always(params_4_36())).exec(phoenix),
                               "[system.restart_policy]\nwhen = \"Never\"");
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.send(Boom{"x"});
    proxy.advance(1h);
    CHECK(starts(proxy).empty());
  }
  SECTION("config durations and factor are used") {
    auto proxy = virtual_proxy(ActorGroup().exec(crasher),
                               "[system.restart_policy]\nwhen = \"OnFailure\"\nmin_backoff = \"1s\"\n"
                               "max_backoff = \"1m\"\nfactor = 3.0\nmax_retries = \"2\"");
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.advance(1s);
    CHECK(starts(proxy) == Lines{"started:restarted#1"});
    proxy.advance(3s - 1ms);
    CHECK(starts(proxy).empty());
    proxy.advance(1ms);
    CHECK(starts(proxy) == Lines{"started:restarted#2"});
    proxy.advance(1h);
    CHECK(starts(proxy).empty());
  }
  SECTION("ctx.set_restart_policy beats the config, for this lifecycle only") {
    auto proxy = virtual_proxy(ActorGroup().exec(phoenix), always);
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.send(Boom{"never"});
    proxy.send(Start{});  // a normal return: Always would restart it
    proxy.advance(1h);
    CHECK(starts(proxy).empty());
  }
  SECTION("ctx.set_restart_policy(nullopt) gives the group's policy back") {
    auto proxy = virtual_proxy(ActorGroup().exec(phoenix), always);
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.send(Boom{"never"});
    proxy.send(Boom{"group"});
    proxy.send(Boom{"x"});
    proxy.advance(4s);
    CHECK(starts(proxy) == Lines{"started:restarted#1"});
  }
  SECTION("the override does not outlive its lifecycle") {
    auto proxy = virtual_proxy(ActorGroup().exec(phoenix), always);
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    proxy.send(Boom{"on_failure"});
    proxy.send(Boom{"x"});
    proxy.advance(4s);
    REQUIRE(starts(proxy) == Lines{"started:restarted#1"});
    proxy.send(Start{});  // a normal return: on_failure would not restart it, the group's Always does
    proxy.advance(8s);
    CHECK(starts(proxy) == Lines{"started:restarted#2"});
  }
  SECTION("a config update at runtime replaces the config's policy") {
    auto proxy = virtual_proxy(ActorGroup().exec(phoenix), always);
    REQUIRE(recv_seen(proxy, 1) == Lines{"0:started:spawned"});
    auto never = AnyConfig::from_toml("[system.restart_policy]\nwhen = \"Never\"");
    REQUIRE(never);
    REQUIRE(proxy.system().core_group("subject")->apply_config(*never));
    proxy.send(Boom{"x"});
    proxy.advance(1h);
    CHECK(starts(proxy).empty());
  }
}

TEST_CASE("a bad [group.system.restart_policy] stops the start with the key in the message", "[core][supervision]") {
  auto start_with = [](const std::string& table) {
    Topology topology;
    topology.local("workers").mount(ActorGroup().exec(phoenix));
    StartOptions options = quick_options();
    options.config_toml = "[workers.system.restart_policy]\n" + table;
    options.config_source = "app.toml";
    auto system = System::start(std::move(topology), std::move(options));
    return system ? std::string("started") : system.error().message();
  };
  CHECK_THAT(start_with("when = \"Sometimes\""),
             Catch::Contains("app.toml:2: [workers] system.restart_policy.when: expected \"Always\", \"OnFailure\" or "
                             "\"Never\", got \"Sometimes\""));
  CHECK_THAT(start_with("when = \"Always\"\nmax_backoff = \"5s\""),
             Catch::Contains("system.restart_policy.min_backoff: required when `when = \"Always\"`"));
  CHECK_THAT(start_with("when = \"OnFailure\"\nmin_backoff = \"soon\"\nmax_backoff = \"5s\""),
             Catch::Contains("system.restart_policy.min_backoff:"));
  CHECK_THAT(start_with("min_backoff = \"1s\""), Catch::Contains("system.restart_policy.when: required"));
  CHECK_THAT(start_with("when = \"Never\"\nbackoff = \"1s\""),
             Catch::Contains("system.restart_policy.backoff: unknown key"));
  CHECK(start_with("when = \"Never\"") == "started");
}

// --- status subscriptions ----------------------------------------------------------------------

namespace {

Outcome<Key> route_keyed(const Envelope& e) {
  if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key);
  if (const auto* b = e.get<Boom>()) return Outcome<Key>::Unicast(std::stoull(b->why));
  return Outcome<Key>::Default();
}

/// Reports every message it receives by name; throws on Boom.
Task<> keyed_reporter(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Boom>()) throw std::runtime_error("boom");
    Seen seen{ctx.key(), std::string(envelope->name()), 0};
    std::ignore = ctx.unbounded_send(seen);
  }
}

std::string line_of(const ActorStatusReport& r) { return fmt::format("{}/{}:{}", r.group, r.key, to_string(r.kind)); }

}  // namespace

TEST_CASE("SubscribeToActorStatuses: the supervisor reports every actor's status now, then every change",
          "[core][supervision]") {
  auto proxy = testing::proxy(ActorGroup().router(MapRouter<Key>(route_keyed)).exec(keyed_reporter));
  proxy.send(Keyed{1, {}, ""});
  proxy.send(Keyed{2, {}, ""});
  REQUIRE(sorted(recv_seen(proxy, 2)) == Lines{"1:Keyed", "2:Keyed"});

  proxy.send(SubscribeToActorStatuses{});
  Lines snapshot;
  for (int i = 0; i < 2; ++i) {
    auto report = proxy.recv_as<ActorStatusReport>();
    snapshot.push_back(line_of(report));
    CHECK(report.addr != 0);
  }
  CHECK(sorted(snapshot) == Lines{"subject/1:Normal", "subject/2:Normal"});

  proxy.send(Boom{"1"});
  auto failed = proxy.recv_as<ActorStatusReport>();
  CHECK(line_of(failed) == "subject/1:Failed");
  CHECK(failed.status().details() == "boom");

  proxy.send(Keyed{3, {}, ""});
  CHECK(line_of(proxy.recv_as<ActorStatusReport>()) == "subject/3:Initializing");
  CHECK(line_of(proxy.recv_as<ActorStatusReport>()) == "subject/3:Normal");
  CHECK(recv_seen(proxy, 1) == Lines{"3:Keyed"});  // the actors never saw the subscription
  proxy.sync();
  CHECK(drain_seen(proxy).empty());
}
