// The network's metrics (elfin_network_*): two systems in one process over loopback TCP exchange
// messages, and each system's scrape shows its traffic with the other, per peer node. Counted as
// messages: Message frames (sends, requests) and Response frames; every frame counts in bytes.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "network_info.hpp"
#include "network_test_config.hpp"

namespace {

using namespace std::chrono_literals;
using elfin::network::test::info;
using elfin::test::eventually;

struct Note {
  std::uint64_t seq = 0;
  ELFIN_MESSAGE(network_metrics_test, Note, seq);
};
/// How many Notes the sink has taken (after every Note sent before it: FIFO per sender).
struct CountNotes {
  ELFIN_REQUEST(network_metrics_test, CountNotes, std::uint64_t);
};

elfin::Task<> sink(elfin::Context<> ctx) {
  std::uint64_t notes = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Note>()) {
      ++notes;
    } else if (envelope->is<CountNotes>()) {
      auto token = envelope->take_token<CountNotes>();
      ctx.respond(std::move(token), notes);
    }
  }
}

/// Stands in for the telemeter: a `system.telemeters` group turns telemetry on.
elfin::Task<> idle(elfin::Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

using elfin::network::test::network_config;

elfin::testing::Proxy node(std::uint16_t node_no, elfin::Blueprint sink_blueprint, std::string_view listen,
                           const std::vector<std::string>& peers) {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  topology.local("system.telemeters").mount(elfin::ActorGroup().exec(idle));
  topology.local("sink").mount(std::move(sink_blueprint));
  elfin::StartOptions start;
  start.node_no = node_no;
  start.config_toml = network_config(listen, peers);
  elfin::testing::ProxyOptions options;
  options.node_no = node_no;
  return elfin::testing::proxy(std::move(topology), "sink", std::move(start), options);
}

/// Node 2: the sink itself.
elfin::testing::Proxy server(std::string_view listen = "127.0.0.1:0") {
  return node(2, elfin::ActorGroup().exec(sink), listen, {});
}

/// Node 1: `sink` is a remote group on node 2, which it dials at `address`.
elfin::testing::Proxy client(const std::string& address) {
  elfin::network::RemoteGroupOptions remote;
  remote.nodes = {2};
  return node(1, elfin::network::remote_group(std::move(remote)), "127.0.0.1:0", {address});
}

bool connected(elfin::testing::Proxy& proxy, std::uint16_t peer) {
  for (const auto& p : info(proxy).peers) {
    if (p.node_no == peer) return true;
  }
  return false;
}

/// One system's `elfin_network_*` series for one peer, as a scrape shows them.
struct Traffic {
  double sent_messages = -1;  // -1: no such series
  double received_messages = -1;
  double sent_bytes = -1;
  double received_bytes = -1;
  std::optional<double> rtt_seconds;
  bool kinds_right = true;  // counters are counters, the round trip a gauge
};

Traffic traffic(elfin::testing::Proxy& proxy, std::uint16_t peer) {
  Traffic t;
  const std::vector<std::pair<std::string, std::string>> labels{{"actor_group", "system.network"},
                                                                {"peer", std::to_string(peer)}};
  for (const auto& sample : proxy.system().scrape_metrics()) {
    if (!sample.name.starts_with("elfin_network_") || sample.labels != labels) continue;
    const bool counter = sample.kind == elfin::telemetry::MetricKind::Counter;
    if (sample.name == "elfin_network_sent_messages_total") {
      t.sent_messages = sample.value;
    } else if (sample.name == "elfin_network_received_messages_total") {
      t.received_messages = sample.value;
    } else if (sample.name == "elfin_network_sent_bytes_total") {
      t.sent_bytes = sample.value;
    } else if (sample.name == "elfin_network_received_bytes_total") {
      t.received_bytes = sample.value;
    } else if (sample.name == "elfin_network_rtt_seconds") {
      t.rtt_seconds = sample.value;
      t.kinds_right = t.kinds_right && sample.kind == elfin::telemetry::MetricKind::Gauge;
      continue;
    }
    t.kinds_right = t.kinds_right && counter;
  }
  return t;
}

/// For `wait_traffic`: byte counters to exceed.
Traffic bytes_floor(double sent, double received) {
  Traffic t;
  t.sent_bytes = sent;
  t.received_bytes = received;
  return t;
}

bool not_less(const Traffic& now, const Traffic& before) {
  return now.sent_messages >= before.sent_messages && now.received_messages >= before.received_messages &&
         now.sent_bytes >= before.sent_bytes && now.received_bytes >= before.received_bytes;
}

/// Scrapes until the message counters for `peer` reach `sent` and `received` and both byte counters
/// exceed `bytes_above`'s. Counting lags the traffic a little: the I/O thread counts a read after
/// dispatching it and a write when its completion runs, so an answer can arrive before its count.
Traffic wait_traffic(elfin::testing::Proxy& proxy, std::uint16_t peer, double sent, double received,
                     const Traffic& bytes_above = {}) {
  Traffic t;
  eventually([&] {
    t = traffic(proxy, peer);
    return t.sent_messages >= sent && t.received_messages >= received && t.sent_bytes > bytes_above.sent_bytes &&
           t.received_bytes > bytes_above.received_bytes;
  });
  return t;
}

}  // namespace

TEST_CASE("each node counts the messages and bytes it exchanged with its peer, and counts only grow",
          "[network][metrics]") {
  auto two = server();
  auto one = client(info(two).listening.at(0));
  REQUIRE(eventually([&] { return connected(one, 2) && connected(two, 1); }));

  constexpr std::uint64_t kNotes = 500;
  for (std::uint64_t seq = 0; seq < kNotes; ++seq) one.send(Note{seq});
  REQUIRE(one.request(CountNotes{}) == kNotes);

  // Node 1 sent the Notes and the request, and got one Response; node 2 the other way round.
  // Each Note is more than a byte on the wire: a frame header, names, a msgpack map.
  const Traffic first_one = wait_traffic(one, 2, kNotes + 1, 1, bytes_floor(kNotes, 0));
  const Traffic first_two = wait_traffic(two, 1, 1, kNotes + 1, bytes_floor(0, kNotes));
  CHECK(first_one.sent_messages == kNotes + 1);
  CHECK(first_one.received_messages == 1);
  CHECK(first_two.received_messages == kNotes + 1);
  CHECK(first_two.sent_messages == 1);
  CHECK(first_one.kinds_right);
  CHECK(first_two.kinds_right);
  CHECK(first_one.sent_bytes > kNotes);
  CHECK(first_two.received_bytes > kNotes);
  CHECK(first_one.received_bytes > 0);
  CHECK(first_two.sent_bytes > 0);

  // More traffic, scraped while it flows: no scrape shows less than the one before, and the
  // messages add up exactly in the end.
  Traffic last_one = first_one;
  Traffic last_two = first_two;
  for (std::uint64_t seq = 0; seq < kNotes; ++seq) {
    one.send(Note{seq});
    if (seq % 50 != 0) continue;
    const Traffic now_one = traffic(one, 2);
    const Traffic now_two = traffic(two, 1);
    CHECK(not_less(now_one, last_one));
    CHECK(not_less(now_two, last_two));
    last_one = now_one;
    last_two = now_two;
  }
  REQUIRE(one.request(CountNotes{}) == 2 * kNotes);
  const Traffic then_one = wait_traffic(one, 2, 2 * kNotes + 2, 2, first_one);
  const Traffic then_two = wait_traffic(two, 1, 2, 2 * kNotes + 2, first_two);
  CHECK(then_one.sent_messages == 2 * kNotes + 2);
  CHECK(then_one.received_messages == 2);
  CHECK(then_two.received_messages == 2 * kNotes + 2);
  CHECK(then_two.sent_messages == 2);
  CHECK(then_one.sent_bytes > first_one.sent_bytes);
  CHECK(then_one.received_bytes > first_one.received_bytes);
  CHECK(then_two.sent_bytes > first_two.sent_bytes);
  CHECK(then_two.received_bytes > first_two.received_bytes);
}

TEST_CASE("a connected peer's round trip is a gauge, measured from the connection's first Ping", "[network][metrics]") {
  auto two = server();
  auto one = client(info(two).listening.at(0));
  REQUIRE(eventually([&] { return connected(one, 2) && connected(two, 1); }));

  // Both ends ping as their connection opens, so a Pong is back long before a ping_interval.
  Traffic t1;
  Traffic t2;
  REQUIRE(eventually([&] {
    t1 = traffic(one, 2);
    t2 = traffic(two, 1);
    return t1.rtt_seconds && t2.rtt_seconds;
  }));
  CHECK(t1.kinds_right);
  CHECK(t2.kinds_right);
  CHECK(*t1.rtt_seconds >= 0);
  CHECK(*t1.rtt_seconds < 10);  // within idle_timeout, or the connection would have closed
  CHECK(*t2.rtt_seconds >= 0);
  CHECK(*t2.rtt_seconds < 10);
}

TEST_CASE("a peer's counters survive the loss of its connection and go on after it is back", "[network][metrics]") {
  std::optional<elfin::testing::Proxy> two = server();
  const std::string address = info(*two).listening.at(0);
  auto one = client(address);
  REQUIRE(eventually([&] { return connected(one, 2); }));

  constexpr std::uint64_t kNotes = 100;
  for (std::uint64_t seq = 0; seq < kNotes; ++seq) one.send(Note{seq});
  REQUIRE(one.request(CountNotes{}) == kNotes);
  const Traffic before = wait_traffic(one, 2, kNotes + 1, 1);
  REQUIRE(before.sent_messages == kNotes + 1);

  two.reset();
  REQUIRE(eventually([&] { return !connected(one, 2); }));
  const Traffic away = traffic(one, 2);
  CHECK(away.sent_messages == before.sent_messages);
  CHECK(away.received_messages == before.received_messages);
  CHECK(away.sent_bytes >= before.sent_bytes);
  CHECK(away.received_bytes >= before.received_bytes);
  CHECK_FALSE(away.rtt_seconds.has_value());  // no connection, no round trip

  // Node 2 comes back on the same address (a fresh sink); node 1 redials.
  two = server(address);
  REQUIRE(eventually([&] { return connected(one, 2); }));
  for (std::uint64_t seq = 0; seq < kNotes; ++seq) one.send(Note{seq});
  REQUIRE(one.request(CountNotes{}) == kNotes);
  const Traffic after = wait_traffic(one, 2, 2 * kNotes + 2, 2, away);
  CHECK(after.sent_messages == 2 * kNotes + 2);
  CHECK(after.received_messages == 2);
  CHECK(after.sent_bytes > away.sent_bytes);
  CHECK(after.received_bytes > away.received_bytes);
  // The new node counts from its own start.
  const Traffic fresh = wait_traffic(*two, 1, 1, kNotes + 1);
  CHECK(fresh.received_messages == kNotes + 1);
  CHECK(fresh.sent_messages == 1);
}
