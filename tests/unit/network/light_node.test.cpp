// The light node (elfin::network::LightNode) against a real node in this process over loopback
// TCP: requests and sends from many threads at once, deadlines, stop and a peer going away with
// requests outstanding — every request answered, none left hanging.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <elfin/caller.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/light_node.hpp>
#include <elfin/network/network.hpp>

#include "../eventually.hpp"
#include "network_test_config.hpp"

namespace {

using namespace std::chrono_literals;
using elfin::Answer;
using elfin::RequestError;
using elfin::network::LightNode;
using elfin::test::eventually;

struct Double {
  std::uint64_t value = 0;
  ELFIN_REQUEST(light_test, Double, std::uint64_t, value);
};
struct Bump {
  std::uint64_t by = 1;
  ELFIN_MESSAGE(light_test, Bump, by);
};
struct Count {
  ELFIN_REQUEST(light_test, Count, std::uint64_t);
};
/// Held until `parties` Gates are held at once, then all are answered (with their own `id`): only
/// requests in flight together get through.
struct Gate {
  std::uint64_t id = 0;
  std::uint64_t parties = 0;
  ELFIN_REQUEST(light_test, Gate, std::uint64_t, id, parties);
};
/// Never answered by the node: its token is parked in `g_stalled` (outside the node, so stopping
/// the node does not answer it either).
struct Stall {
  ELFIN_REQUEST(light_test, Stall, std::uint64_t);
};

std::mutex g_stalled_mu;
std::vector<elfin::ResponseToken<Stall>> g_stalled;
std::atomic<std::size_t> g_stalled_count{0};

void drop_stalled() {
  std::lock_guard lock(g_stalled_mu);
  g_stalled.clear();
  g_stalled_count = 0;
}

elfin::Task<> service(elfin::Context<> ctx) {
  std::uint64_t count = 0;
  std::vector<std::pair<std::uint64_t, elfin::ResponseToken<Gate>>> gated;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* d = envelope->get<Double>()) {
      ctx.respond(envelope->take_token<Double>(), d->value * 2);
    } else if (const auto* b = envelope->get<Bump>()) {
      count += b->by;
    } else if (envelope->is<Count>()) {
      ctx.respond(envelope->take_token<Count>(), count);
    } else if (const auto* g = envelope->get<Gate>()) {
      gated.emplace_back(g->id, envelope->take_token<Gate>());
      if (gated.size() >= g->parties) {
        for (auto& [id, token] : std::exchange(gated, {})) ctx.respond(std::move(token), id);
      }
    } else if (envelope->is<Stall>()) {
      std::lock_guard lock(g_stalled_mu);
      g_stalled.push_back(envelope->take_token<Stall>());
      ++g_stalled_count;
    }
  }
}

/// A real node: system.network listening on a free loopback port, and the group `service`.
struct Server {
  std::optional<elfin::System> system;
  std::string address;  // "tcp://127.0.0.1:PORT"

  explicit Server(std::uint16_t node) {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    topology.local(std::string(elfin::Caller::kGroup)).mount(elfin::Caller::blueprint());
    topology.local("service").mount(elfin::ActorGroup().exec(service));
    elfin::StartOptions start;
    start.node_no = node;
    start.workers = 2;
    start.config_toml = elfin::network::test::network_config("127.0.0.1:0", {});
    auto started = elfin::System::start(std::move(topology), std::move(start));
    REQUIRE(started);
    system.emplace(std::move(*started));
    // The server's own caller asks its network where it listens.
    auto caller = elfin::Caller::attach(*system);
    REQUIRE(caller);
    auto info = caller->request_to(system->group_addr("system.network"), elfin::network::GetNetworkInfo{}, 10s).get();
    REQUIRE(info);
    REQUIRE(info->listening.size() == 1);
    address = "tcp://" + info->listening[0];
  }
  ~Server() { stop(); }
  void stop() {
    if (!system) return;
    system->terminate("test over");
    system->join();
    system.reset();
  }
};

LightNode light_node(const Server& server, std::uint16_t node = 0) {
  auto started = LightNode::start({
      .peers = {server.address},
      .groups = {{.name = "svc", .nodes = {1}, .remote_name = "service"}},
      .node = node,
      .secret = "s3cret",
  });
  REQUIRE(started);
  auto up = started->wait_connected(10s);
  INFO((up ? std::string{} : up.error()));
  REQUIRE(up);
  return std::move(*started);
}

}  // namespace

TEST_CASE("light node: a request to a real node over TCP is answered, and a send arrives", "[network][light]") {
  Server server(1);
  auto node = light_node(server, 40);
  CHECK(node.connected(1));

  auto doubled = node.request("svc", Double{21}, 5s).get();
  REQUIRE(doubled);
  CHECK(*doubled == 42);

  CHECK(node.send("svc", Bump{3}));
  CHECK(node.send("svc", Bump{4}));
  // From one thread, a send and a later request take the same way (the caller's one flow): the
  // count includes both bumps.
  auto count = node.request("svc", Count{}, 5s).get();
  REQUIRE(count);
  CHECK(*count == 7);

  SECTION("a callback gets the answer") {
    std::promise<Answer<std::uint64_t>> got;
    node.request("svc", Double{5}, 5s, [&](Answer<std::uint64_t> a) { got.set_value(std::move(a)); });
    auto answer = got.get_future().get();
    REQUIRE(answer);
    CHECK(*answer == 10);
  }
  SECTION("a group it does not know fails at once") {
    auto answer = node.request("nowhere", Count{}, 5s).get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::Failed);
  }
  CHECK(node.caller().outstanding() == 0);
}

TEST_CASE("light node: requests from many threads are in flight at once", "[network][light]") {
  Server server(1);
  auto node = light_node(server, 41);
  // The service answers no Gate before `kThreads` are held: one request per thread, each thread
  // blocked on its own, gets through only if all of them are in flight together.
  constexpr std::uint64_t kThreads = 8;
  std::vector<std::thread> threads;
  std::vector<Answer<std::uint64_t>> answers(kThreads, elfin::Err{RequestError{}});
  threads.reserve(kThreads);
  for (std::uint64_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { answers[t] = node.request("svc", Gate{t, kThreads}, 20s).get(); });
  }
  for (auto& thread : threads) thread.join();
  for (std::uint64_t t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << (answers[t] ? std::string("ok") : to_string(answers[t].error())));
    REQUIRE(answers[t]);
    CHECK(*answers[t] == t);
  }
}

TEST_CASE("light node: N threads x M requests, many in flight per thread, are all answered correctly",
          "[network][light]") {
  Server server(1);
  auto node = light_node(server, 42);
  constexpr std::uint64_t kThreads = 8;
  constexpr std::uint64_t kPerThread = 400;
  std::atomic<std::uint64_t> wrong{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> right{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (std::uint64_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half by futures (all issued before the first is awaited), half by callbacks.
      std::vector<std::pair<std::uint64_t, std::future<Answer<std::uint64_t>>>> futures;
      std::atomic<std::uint64_t> called{0};
      for (std::uint64_t i = 0; i < kPerThread; ++i) {
        const std::uint64_t value = t * 1'000'000 + i;
        if (i % 2 == 0) {
          futures.emplace_back(value, node.request("svc", Double{value}, 20s));
        } else {
          node.request("svc", Double{value}, 20s, [&, value](Answer<std::uint64_t> a) {
            if (!a) {
              ++failed;
            } else if (*a != value * 2) {
              ++wrong;
            } else {
              ++right;
            }
            called.fetch_add(1, std::memory_order_release);
          });
        }
      }
      for (auto& [value, future] : futures) {
        auto a = future.get();
        if (!a) {
          ++failed;
        } else if (*a != value * 2) {
          ++wrong;
        } else {
          ++right;
        }
      }
      // Callbacks refer to this frame's `called`: wait for all of them before leaving.
      while (called.load(std::memory_order_acquire) < kPerThread / 2) std::this_thread::yield();
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  CHECK(right == kThreads * kPerThread);
  CHECK(node.caller().outstanding() == 0);
}

TEST_CASE("light node: a request not answered by its deadline is answered TimedOut", "[network][light]") {
  Server server(1);
  auto node = light_node(server, 43);
  auto answer = node.request("svc", Stall{}, 200ms).get();
  REQUIRE_FALSE(answer);
  CHECK(answer.error() == RequestError::TimedOut);
  CHECK(node.caller().outstanding() == 0);
  // The node is still fine: the next request is answered.
  auto doubled = node.request("svc", Double{1}, 5s).get();
  REQUIRE(doubled);
  CHECK(*doubled == 2);
  drop_stalled();
}

TEST_CASE("light node: stop answers every outstanding request Stopped, and later requests fail at once",
          "[network][light]") {
  Server server(1);
  auto node = light_node(server, 44);
  constexpr std::size_t kStalled = 20;
  std::vector<std::future<Answer<std::uint64_t>>> futures;
  futures.reserve(kStalled);
  for (std::size_t i = 0; i < kStalled; ++i) futures.push_back(node.request("svc", Stall{}, 60s));
  // Every one reached the service before the stop, so it is the stop that answers them.
  REQUIRE(eventually([] { return g_stalled_count == kStalled; }));
  CHECK(node.caller().outstanding() == kStalled);

  node.stop();
  for (auto& future : futures) {
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    auto answer = future.get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::Stopped);
    CHECK_THAT(answer.error().reason(), Catch::Contains("stopped"));
  }
  CHECK(node.caller().outstanding() == 0);
  auto later = node.request("svc", Double{1}, 60s);
  REQUIRE(later.wait_for(10s) == std::future_status::ready);
  auto answer = later.get();
  REQUIRE_FALSE(answer);
  CHECK(answer.error() == RequestError::Stopped);
  drop_stalled();
}

TEST_CASE("light node: a peer going away answers its outstanding requests Failed", "[network][light]") {
  Server server(1);
  auto node = light_node(server, 45);
  constexpr std::size_t kStalled = 20;
  std::vector<std::future<Answer<std::uint64_t>>> futures;
  futures.reserve(kStalled);
  for (std::size_t i = 0; i < kStalled; ++i) futures.push_back(node.request("svc", Stall{}, 60s));
  REQUIRE(eventually([] { return g_stalled_count == kStalled; }));

  server.stop();  // its connection closes; the parked tokens are never answered
  for (auto& future : futures) {
    REQUIRE(future.wait_for(20s) == std::future_status::ready);
    auto answer = future.get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::Failed);
  }
  CHECK(node.caller().outstanding() == 0);
  // With the peer gone, a request reaches no one and fails at once rather than waiting.
  auto later = node.request("svc", Double{1}, 60s);
  REQUIRE(later.wait_for(10s) == std::future_status::ready);
  CHECK_FALSE(later.get());
  drop_stalled();
}

TEST_CASE("light node: wait_connected names the groups with no connected node after its deadline", "[network][light]") {
  // Nobody listens on this address's port: the port of a server that has gone.
  std::string address;
  {
    Server gone(1);
    address = gone.address;
  }
  auto node = LightNode::start({.peers = {address}, .groups = {{.name = "svc", .nodes = {1}}}, .node = 46});
  REQUIRE(node);
  auto up = node->wait_connected(300ms);
  REQUIRE_FALSE(up);
  CHECK_THAT(up.error(), Catch::Contains("svc"));
  CHECK_FALSE(node->connected(1));
}
