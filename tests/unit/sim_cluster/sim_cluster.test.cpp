// The simulated cluster: a replicated toy group under network faults, requests across the
// simulated network, crashes, and replaying a run from its seed.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <elfin/elfin.hpp>
#include <elfin/testing/sim_cluster.hpp>

using namespace std::chrono_literals;
using elfin::testing::SimCluster;
using elfin::testing::SimClusterOptions;
using elfin::testing::SimNode;

namespace toy {

/// A client's write, to the primary (node 1).
struct Put {
  std::uint64_t value = 0;
  ELFIN_MESSAGE(toy, Put, value);
};
/// Primary -> backup `target`: log entry `seq`.
struct Replicate {
  std::uint16_t target = 0;
  std::uint64_t seq = 0;
  std::uint64_t value = 0;
  ELFIN_MESSAGE(toy, Replicate, target, seq, value);
};
/// Backup `from` -> primary: everything up to `seq` is applied.
struct Ack {
  std::uint16_t target = 1;
  std::uint16_t from = 0;
  std::uint64_t seq = 0;
  ELFIN_MESSAGE(toy, Ack, target, from, seq);
};
struct Tick {
  ELFIN_MESSAGE(toy, Tick);
};
/// The replica's log.
struct GetLog {
  ELFIN_REQUEST(toy, GetLog, std::vector<std::uint64_t>);
};

/// Node `target`'s echo: answers `text`, or keeps the request unanswered when `hold`.
struct Echo {
  std::uint16_t target = 0;
  std::string text;
  bool hold = false;
  ELFIN_REQUEST(toy, Echo, std::string, target, text, hold);
};
/// To the asker (from the test): make an Echo request and report how it went.
struct Ask {
  std::uint16_t target = 0;
  std::string text;
  bool hold = false;
  ELFIN_REQUEST(toy, Ask, std::string, target, text, hold);
};

/// Node `target`'s echo answers a Hello with a Greeting sent to the Hello's sender address.
struct Hello {
  std::uint16_t target = 0;
  std::uint64_t after_ms = 0;  ///< greet that long after the Hello arrived
  ELFIN_MESSAGE(toy, Hello, target, after_ms);
};
struct GreetLater {
  ELFIN_MESSAGE(toy, GreetLater);
};
struct Greeting {
  std::string text;
  ELFIN_MESSAGE(toy, Greeting, text);
};
/// To the asker: send a Hello to `target`.
struct SayHello {
  std::uint16_t target = 0;
  std::uint64_t after_ms = 0;
  ELFIN_MESSAGE(toy, SayHello, target, after_ms);
};
struct GetGreetings {
  ELFIN_REQUEST(toy, GetGreetings, std::vector<std::string>);
};

std::optional<std::uint16_t> target_of(const elfin::Envelope& e) {
  if (const auto* m = e.get<Hello>()) return m->target;
  if (const auto* m = e.get<Replicate>()) return m->target;
  if (const auto* m = e.get<Ack>()) return m->target;
  if (const auto* m = e.get<Echo>()) return m->target;
  return std::nullopt;
}

/// A primary-backup log: node 1 appends Puts and resends every entry a backup has not
/// acknowledged on each tick (so lost messages are repaired); backups apply entries in order and
/// acknowledge their applied prefix.
elfin::Task<> replica(elfin::Context<> ctx, std::uint16_t self, std::vector<std::uint16_t> backups) {
  ctx.attach(elfin::Interval(Tick{})).start(10ms);
  std::vector<std::uint64_t> log;
  std::map<std::uint16_t, std::uint64_t> acked;
  while (auto envelope = co_await ctx.recv()) {
    bool resend = false;
    co_await elfin::handle(
        *envelope,
        [&](const Put& put) {
          log.push_back(put.value);
          resend = true;
        },
        [&](const Tick&) { resend = self == 1; },
        [&](const Replicate& r) -> elfin::Task<> {
          if (r.seq == log.size() + 1) log.push_back(r.value);
          std::ignore = co_await ctx.send(Ack{1, self, log.size()});
        },
        // The backup's applied prefix as it last said (a restarted backup starts again from 0).
        [&](const Ack& a) { acked[a.from] = a.seq; },
        [&](const GetLog&, elfin::ResponseToken<GetLog> token) { ctx.respond(std::move(token), log); });
    if (!resend) continue;
    for (auto b : backups) {
      for (std::uint64_t seq = acked[b] + 1; seq <= log.size(); ++seq) {
        std::ignore = co_await ctx.send(Replicate{b, seq, log[seq - 1]});
      }
    }
  }
}

elfin::Task<> echo(elfin::Context<> ctx, std::uint16_t self) {
  std::vector<elfin::ResponseToken<Echo>> held;  // answered never: the node crashes first
  elfin::Addr greet;                             // whom GreetLater greets
  while (auto envelope = co_await ctx.recv()) {
    const elfin::Addr sender = envelope->sender();
    co_await elfin::handle(
        *envelope,
        [&](const Echo& e, elfin::ResponseToken<Echo> token) {
          if (e.hold) {
            held.push_back(std::move(token));
          } else {
            ctx.respond(std::move(token), "echo " + e.text);
          }
        },
        [&](const Hello& hello) -> elfin::Task<> {
          if (hello.after_ms > 0) {
            greet = sender;
            ctx.attach(elfin::Delay(std::chrono::milliseconds(hello.after_ms), GreetLater{}));
            co_return;
          }
          // An address on another node: the reply crosses the network without a remote group.
          std::ignore = co_await ctx.send_to(sender, Greeting{"hello from " + std::to_string(self)});
        },
        [&](const GreetLater&) -> elfin::Task<> {
          std::ignore = co_await ctx.send_to(greet, Greeting{"later from " + std::to_string(self)});
        });
  }
}

elfin::Task<> asker(elfin::Context<> ctx) {
  std::vector<std::string> greetings;
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(
        *envelope,
        [&](const Ask& ask, elfin::ResponseToken<Ask> token) -> elfin::Task<> {
          auto answer = co_await ctx.request(Echo{ask.target, ask.text, ask.hold});
          ctx.respond(std::move(token), answer ? *answer : "failed: " + answer.error().reason());
        },
        [&](const SayHello& say) -> elfin::Task<> { std::ignore = co_await ctx.send(Hello{say.target, say.after_ms}); },
        [&](const Greeting& g) { greetings.push_back(g.text); },
        [&](const GetGreetings&, elfin::ResponseToken<GetGreetings> token) {
          ctx.respond(std::move(token), greetings);
        });
  }
}

/// Every node: `replicas` (the log), `echo`, `asker`, and `peers`, the sim remote group through
/// which they reach each other (pick: the node the message names).
elfin::Topology topology(SimNode& node, std::uint16_t nodes) {
  std::vector<std::uint16_t> all;
  for (std::uint16_t n = 1; n <= nodes; ++n) all.push_back(n);
  std::vector<std::uint16_t> backups(all.begin() + 1, all.end());
  elfin::Topology topology;
  auto replicas = topology.local("replicas");
  auto echoes = topology.local("echo");
  auto askers = topology.local("asker");
  auto peers = topology.local("peers");
  replicas.route_to(peers, [](const elfin::Envelope& e) { return e.is<Replicate>() || e.is<Ack>(); });
  const std::uint16_t self = node.node_no();
  replicas.mount(
      elfin::ActorGroup().exec([self, backups](elfin::Context<> ctx) { return replica(ctx, self, backups); }));
  echoes.mount(elfin::ActorGroup().exec([self](elfin::Context<> ctx) { return echo(ctx, self); }));
  askers.mount(elfin::ActorGroup().exec(asker));
  // Replicate and Ack go to the peers' `replicas`, Echo to their `echo`: two remote groups.
  peers.mount(elfin::testing::sim_remote_group(
      {.nodes = all, .remote_name = "replicas", .pick = [](const elfin::Envelope& e, const auto&) {
         return target_of(e);
       }}));
  auto echo_peers = topology.local("echo_peers");
  askers.route_to(echo_peers, [](const elfin::Envelope& e) { return e.is<Echo>() || e.is<Hello>(); });
  echo_peers.mount(elfin::testing::sim_remote_group(
      {.nodes = all, .remote_name = "echo", .pick = [](const elfin::Envelope& e, const auto&) {
         return target_of(e);
       }}));
  return topology;
}

}  // namespace toy

namespace {

SimCluster toy_cluster(std::uint64_t seed, std::uint16_t nodes = 3) {
  SimClusterOptions options;
  options.nodes = nodes;
  options.seed = seed;
  return SimCluster(options, [nodes](SimNode& node) { return toy::topology(node, nodes); });
}

std::vector<std::uint64_t> log_of(SimCluster& cluster, std::uint16_t node) {
  auto request = cluster.request(node, "replicas", toy::GetLog{});
  REQUIRE(cluster.run_until([&] { return request.done(); }, 1s));
  auto result = request.result();
  REQUIRE(result);
  return *result;
}

bool converged(SimCluster& cluster, std::size_t expected) {
  for (std::uint16_t n = 1; n <= cluster.size(); ++n) {
    if (cluster.is_up(n) && log_of(cluster, n).size() != expected) return false;
  }
  return true;
}

/// A faulty run of the toy log: drops, duplicates, reordering, a partition healed, writes
/// spread over time at moments drawn from the seed. Returns the trace.
std::vector<std::string> faulty_run(std::uint64_t seed) {
  SimCluster cluster = toy_cluster(seed);
  cluster.network().set_faults({.min_delay = 1ms, .max_delay = 30ms, .drop = 0.2, .duplicate = 0.1, .reorder = true});
  for (std::uint64_t v = 1; v <= 10; ++v) {
    cluster.send(1, "replicas", toy::Put{v});
    cluster.advance(std::chrono::milliseconds(1 + cluster.random().below(20)));
  }
  cluster.network().partition({1}, {3});
  for (std::uint64_t v = 11; v <= 20; ++v) {
    cluster.send(1, "replicas", toy::Put{v});
    cluster.advance(std::chrono::milliseconds(1 + cluster.random().below(20)));
  }
  cluster.advance(300ms);
  cluster.network().heal_all();
  cluster.advance(500ms);
  return cluster.trace();
}

}  // namespace

TEST_CASE("a primary-backup log converges under drops, delays, duplicates, reordering and a healed partition",
          "[sim_cluster]") {
  SimCluster cluster = toy_cluster(1234);
  INFO(cluster.describe());
  cluster.network().set_faults({.min_delay = 1ms, .max_delay = 30ms, .drop = 0.2, .duplicate = 0.1, .reorder = true});
  cluster.network().partition({1}, {3});
  for (std::uint64_t v = 1; v <= 20; ++v) {
    cluster.send(1, "replicas", toy::Put{v});
    cluster.advance(5ms);
  }
  // Node 2 gets everything despite the faults; node 3 nothing while cut off.
  REQUIRE(cluster.run_until([&] { return log_of(cluster, 2).size() == 20; }, 5s));
  cluster.advance(1s);
  CHECK(log_of(cluster, 3).empty());

  cluster.network().heal_all();
  REQUIRE(cluster.run_until([&] { return converged(cluster, 20); }, 5s));
  std::vector<std::uint64_t> expected;
  for (std::uint64_t v = 1; v <= 20; ++v) expected.push_back(v);
  for (std::uint16_t n = 1; n <= 3; ++n) CHECK(log_of(cluster, n) == expected);
  const auto stats = cluster.network().stats();
  CHECK(stats.lost > 0);        // the faults did happen ...
  CHECK(stats.duplicated > 0);  // ... and were repaired
}

TEST_CASE("a one-way cut loses messages in that direction only", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(5);
  INFO(cluster.describe());
  cluster.network().cut(1, 2);  // the primary cannot reach node 2; node 2 still reaches it
  cluster.send(1, "replicas", toy::Put{7});
  cluster.advance(200ms);
  CHECK(log_of(cluster, 2).empty());
  CHECK(log_of(cluster, 3) == std::vector<std::uint64_t>{7});
  // Node 2 -> 1 works: its Echo request reaches node 1 and the answer comes back (1 -> 2 is cut,
  // so the answer is lost and the request fails instead of hanging).
  auto through = cluster.request(2, "asker", toy::Ask{1, "hello"});
  REQUIRE(cluster.run_until([&] { return through.done(); }, 1s));
  CHECK(through.result().value().starts_with("failed: "));
  cluster.network().heal(1, 2);
  auto back = cluster.request(2, "asker", toy::Ask{1, "again"});
  REQUIRE(cluster.run_until([&] { return back.done(); }, 1s));
  CHECK(back.result().value() == "echo again");
  REQUIRE(cluster.run_until([&] { return log_of(cluster, 2).size() == 1; }, 1s));
}

TEST_CASE("a reply sent to a remote sender's address crosses the network", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(13);
  INFO(cluster.describe());
  cluster.send(1, "asker", toy::SayHello{3});
  cluster.send(1, "asker", toy::SayHello{2});
  cluster.advance(10ms);
  auto greetings = cluster.request(1, "asker", toy::GetGreetings{});
  REQUIRE(cluster.run_until([&] { return greetings.done(); }, 1s));
  // Both Hellos land at 1 ms; node 2 goes first (nodes run in order), so its greeting does too.
  CHECK(greetings.result().value() == std::vector<std::string>{"hello from 2", "hello from 3"});
  // Cut the way back: the greeting is lost.
  cluster.network().cut(2, 1);
  cluster.send(1, "asker", toy::SayHello{2});
  cluster.advance(10ms);
  auto after_cut = cluster.request(1, "asker", toy::GetGreetings{});
  REQUIRE(cluster.run_until([&] { return after_cut.done(); }, 1s));
  CHECK(after_cut.result().value().size() == 2);
}

TEST_CASE("a node's clock reads the instant a message arrives: a delay it starts then ends on time", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(17);
  INFO(cluster.describe());
  cluster.network().set_faults({.min_delay = 5ms, .max_delay = 5ms});
  cluster.advance(3ms);  // not at 0: the clocks must follow the cluster's
  cluster.send(1, "asker", toy::SayHello{2, 10});
  std::vector<std::string> greetings;
  REQUIRE(cluster.run_until(
      [&] {
        auto request = cluster.request(1, "asker", toy::GetGreetings{});
        REQUIRE(request.done());
        greetings = request.result().value();
        return !greetings.empty();
      },
      1s));
  // Hello sent at 3 ms, arrives at 8; the delay fires at 18; the greeting arrives at 23.
  CHECK(cluster.now() == 23ms);
  CHECK(greetings == std::vector<std::string>{"later from 2"});
}

TEST_CASE("a request across the network gets its response after the links' delays", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(9);
  INFO(cluster.describe());
  cluster.network().set_faults({.min_delay = 20ms, .max_delay = 20ms});
  const auto start = cluster.now();
  auto answer = cluster.request(1, "asker", toy::Ask{3, "ping"});
  REQUIRE(cluster.run_until([&] { return answer.done(); }, 1s));
  CHECK(answer.result().value() == "echo ping");
  CHECK(cluster.now() - start == 40ms);  // there and back, on the virtual clock
}

TEST_CASE("a request to a node that crashes fails instead of hanging, and the node comes back", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(11);
  INFO(cluster.describe());
  SECTION("the target holds the request when it crashes") {
    auto held = cluster.request(1, "asker", toy::Ask{2, "never answered", true});
    cluster.advance(50ms);
    REQUIRE_FALSE(held.done());
    cluster.crash(2);
    REQUIRE(cluster.run_until([&] { return held.done(); }, 1s));
    CHECK(held.result().value() == "failed: node 2 crashed");
  }
  SECTION("the request is still on its way when the target crashes") {
    cluster.network().set_faults({.min_delay = 50ms, .max_delay = 50ms});
    auto in_flight = cluster.request(1, "asker", toy::Ask{2, "lost"});
    cluster.advance(10ms);
    cluster.crash(2);
    REQUIRE(cluster.run_until([&] { return in_flight.done(); }, 1s));
    CHECK(in_flight.result().value() == "failed: node 2 crashed");
  }
  SECTION("the target is down when the request is sent") {
    cluster.crash(2);
    auto refused = cluster.request(1, "asker", toy::Ask{2, "nobody"});
    REQUIRE(cluster.run_until([&] { return refused.done(); }, 1s));
    CHECK(refused.result().value().starts_with("failed: "));
  }
  CHECK_FALSE(cluster.is_up(2));
  cluster.restart(2);
  auto again = cluster.request(1, "asker", toy::Ask{2, "back"});
  REQUIRE(cluster.run_until([&] { return again.done(); }, 1s));
  CHECK(again.result().value() == "echo back");
}

TEST_CASE("a crashed backup restarts empty and catches up", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(21);
  INFO(cluster.describe());
  cluster.network().set_faults({.min_delay = 1ms, .max_delay = 10ms, .drop = 0.1});
  for (std::uint64_t v = 1; v <= 5; ++v) cluster.send(1, "replicas", toy::Put{v});
  REQUIRE(cluster.run_until([&] { return converged(cluster, 5); }, 2s));
  cluster.crash(3);
  for (std::uint64_t v = 6; v <= 10; ++v) cluster.send(1, "replicas", toy::Put{v});
  cluster.advance(100ms);
  cluster.restart(3);  // the toy keeps its log in memory: node 3 starts from nothing
  REQUIRE(cluster.run_until([&] { return converged(cluster, 10); }, 2s));
  CHECK(log_of(cluster, 3) == log_of(cluster, 1));
}

TEST_CASE("the same seed replays the same run, and another seed gives another run", "[sim_cluster]") {
  const auto first = faulty_run(77);
  const auto second = faulty_run(77);
  const auto other = faulty_run(78);
  CHECK(first.size() > 200);
  CHECK(first == second);
  CHECK(first != other);
}

TEST_CASE("a mistake of the test (an unknown node, restarting a running one) names the seed", "[sim_cluster]") {
  SimCluster cluster = toy_cluster(3);
  CHECK_THROWS_WITH(cluster.crash(9), Catch::Contains("there is no node 9") && Catch::Contains("seed 3"));
  CHECK_THROWS_AS(cluster.restart(1), elfin::testing::SimError);  // it is up
}
