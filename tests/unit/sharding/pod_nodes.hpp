// N pod nodes in one process over real loopback TCP: node 1 runs the shard manager and pod-1,
// node i runs pod-i; every node dials node 1. Each node has its pod (`sharding.pod`), a cart entity
// group `carts.local` fronted by `carts` (a remote group over every pod node whose node selector
// is actors::sharding::owner_node), an `inventory` group (a plain group registered by name in its
// pod's cache, the broadcast target), and a `client` that runs request_entity and broadcasts.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/broadcast.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/owner_node.hpp>
#include <elfin/actors/sharding/request_entity.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "../network/network_test_config.hpp"
#include "../temp_dir.hpp"
#include "carts.hpp"

namespace elfin::test {

inline constexpr const char* kPodNodesFunction = "jump-xxh64/1:16";

/// What a pod's inventory answers: which pod it is on.
struct WhichPod {
  ELFIN_REQUEST(test_pod_nodes, WhichPod, std::string);
};

/// One pod's part of a broadcast, as the client reports it.
struct PodReply {
  std::string pod;  ///< the pod's address
  bool ok = false;
  std::string answer;      ///< the inventory's answer
  std::int32_t kind = -1;  ///< BroadcastErrorKind when not ok
  std::string detail;
  ELFIN_PART(pod, ok, answer, kind, detail);
};

/// Asks the client to broadcast WhichPod to `inventory` on every pod.
struct AskAllPods {
  std::uint32_t pod_timeout_ms = 10'000;
  ELFIN_REQUEST(test_pod_nodes, AskAllPods, std::vector<PodReply>, pod_timeout_ms);
};

/// What the client's traffic (RunTraffic) did.
struct TrafficReport {
  std::uint64_t sent = 0;  ///< requests made (each a new sequence number)
  std::uint64_t ok = 0;    ///< answered by some owner
  std::vector<std::string> errors;
  ELFIN_PART(sent, ok, errors);
};

/// Asks the client to send CartServe to `carts` in turn, each through request_entity via the
/// `carts` front, until the node's `stop` flag is set.
struct RunTraffic {
  std::vector<std::string> carts;
  std::uint64_t front = 0;  ///< raw Addr of the `carts` front on the client's node
  std::uint32_t send_timeout_ms = 5'000;
  ELFIN_REQUEST(test_pod_nodes, RunTraffic, TrafficReport, carts, front, send_timeout_ms);
};

class PodNodes {
 public:
  struct Node {
    std::shared_ptr<actors::sharding::AssignmentCache> cache = std::make_shared<actors::sharding::AssignmentCache>();
    std::shared_ptr<actors::sharding::EntityRegistry> registry = std::make_shared<actors::sharding::EntityRegistry>();
    /// The inventory drops WhichPod unanswered while set.
    std::shared_ptr<std::atomic<bool>> mute = std::make_shared<std::atomic<bool>>(false);
    /// The pod's requests to the manager reach no one while set.
    std::shared_ptr<std::atomic<bool>> cut = std::make_shared<std::atomic<bool>>(false);
    /// The inventory holds WhichPod without answering while set.
    std::shared_ptr<std::atomic<bool>> hold = std::make_shared<std::atomic<bool>>(false);
    /// When the inventory last received WhichPod.
    std::shared_ptr<std::atomic<std::chrono::steady_clock::rep>> asked_at =
        std::make_shared<std::atomic<std::chrono::steady_clock::rep>>(0);
    /// The client's RunTraffic ends when set.
    std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
    std::unique_ptr<testing::Proxy> proxy;
  };

  /// Node numbers the `carts` front may pick (nodes added later included).
  static constexpr std::size_t kMaxNodes = 16;

  explicit PodNodes(std::size_t count) : nodes_(count) {
    for (std::size_t i = 1; i <= count; ++i) start(i);
  }

  /// Starts one more pod node (a new pod, with a new incarnation); its number.
  std::size_t add_node() {
    nodes_.emplace_back();
    start(nodes_.size());
    return nodes_.size();
  }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }

  Node& node(std::size_t i) { return nodes_.at(i - 1); }
  testing::Proxy& proxy(std::size_t i) { return *node(i).proxy; }
  static std::string pod_name(std::size_t i) { return fmt::format("pod-{}", i); }
  /// Stops node `i` without its pod unregistering (as a crash would): its link to the manager
  /// is cut first, so the graceful stop's Unregister reaches no one.
  void kill(std::size_t i) {
    node(i).cut->store(true);
    node(i).proxy.reset();
    world_->pod_gone(pod_name(i));  // its process is gone, and every cart it ran with it
  }
  [[nodiscard]] std::shared_ptr<CartWorld> world() const { return world_; }

  /// Every pod holds its share of the shards and knows the manager's current map.
  bool settled() {
    const std::size_t n = nodes_.size();
    if (!eventually([&] {
          std::size_t total = 0;
          for (auto& node : nodes_) {
            const std::size_t owned = node.cache->owned().size();
            if (owned < 16 / n) return false;
            total += owned;
          }
          return total == 16;
        })) {
      return false;
    }
    return eventually([&] {
      auto map = proxy(1).request_fallible(protocols::sharding::GetAssignments{},
                                           proxy(1).system().group_addr("sharding.manager"));
      if (!map) return false;
      for (auto& node : nodes_) {
        if (node.cache->map_epoch() != map->epoch || node.cache->pods().size() != n) return false;
      }
      return true;
    });
  }

  /// How many peers node `i` is connected to now.
  std::size_t peers(std::size_t i) {
    auto info = proxy(i).request_fallible(network::GetNetworkInfo{}, proxy(i).system().group_addr("system.network"));
    return info ? info->peers.size() : 0;
  }

 private:
  static std::string listen_of(testing::Proxy& proxy) {
    auto info = proxy.request_fallible(network::GetNetworkInfo{}, proxy.system().group_addr("system.network"));
    if (!info || info->listening.empty()) throw std::runtime_error("the node listens nowhere");
    return info->listening.front();
  }

  void start(std::size_t i) {
    Node& node = nodes_[i - 1];
    const std::string name = pod_name(i);
    Topology topology;
    topology.local("system.network").mount(network::blueprint());
    auto manager = topology.local("sharding.manager");
    if (i == 1) {
      manager.mount(actors::shard_manager::blueprint());
    } else {
      manager.mount(network::remote_group({.nodes = {1}}));
    }
    auto pod = topology.local("sharding.pod");
    pod.mount(actors::sharding::pod({node.cache, 10 + i}));
    pod.route_to(manager, [cut = node.cut](const Envelope& e) { return e.protocol() == "sharding" && !cut->load(); });
    actors::sharding::EntityOptions options;
    options.cache = node.cache;
    options.shard_function = kPodNodesFunction;
    options.entity_id = cart_id;
    options.registry = node.registry;
    topology.local("carts.local")
        .mount(actors::sharding::entities(
            std::move(options), [world = world_, name, registry = node.registry](Context<NoConfig, std::string> ctx) {
              return cart(ctx, world, name, registry);
            }));
    network::RemoteGroupOptions front;
    for (std::size_t n = 1; n <= std::max(nodes_.size(), kMaxNodes); ++n) {
      front.nodes.push_back(static_cast<std::uint16_t>(n));
    }
    front.remote_name = "carts.local";
    front.pick = actors::sharding::owner_node(node.cache, kPodNodesFunction, cart_id);
    topology.local("carts").mount(network::remote_group(std::move(front)));
    topology.local("inventory")
        .mount(ActorGroup().exec([cache = node.cache, mute = node.mute, hold = node.hold, asked_at = node.asked_at,
                                  name](Context<> ctx) -> Task<> {
          cache->add_group(ctx.group(), ctx.group_addr().raw());
          std::vector<ResponseToken<WhichPod>> held;
          while (auto envelope = co_await ctx.recv()) {
            co_await handle(*envelope, [&](const WhichPod&, ResponseToken<WhichPod> token) {
              asked_at->store(std::chrono::steady_clock::now().time_since_epoch().count());
              if (hold->load()) {
                held.push_back(std::move(token));
              } else if (!mute->load()) {
                ctx.respond(std::move(token), name);
              }
            });
          }
        }));
    topology.local("client").mount(ActorGroup().exec([cache = node.cache, stop = node.stop](Context<> ctx) -> Task<> {
      while (auto envelope = co_await ctx.recv()) {
        co_await handle(
            *envelope,
            [&](const AskAllPods& ask, ResponseToken<AskAllPods> token) -> Task<> {
              auto answers = co_await actors::sharding::broadcast_request(
                  ctx, WhichPod{},
                  {.cache = cache, .group = "inventory", .pod_timeout = std::chrono::milliseconds{ask.pod_timeout_ms}});
              std::vector<PodReply> replies;
              for (auto& [entry, answer] : answers) {
                PodReply reply;
                reply.pod = entry.pod.address;
                reply.ok = static_cast<bool>(answer);
                if (answer) {
                  reply.answer = *answer;
                } else {
                  reply.kind = static_cast<std::int32_t>(answer.error().kind);
                  reply.detail = fmt::format("{}", answer.error());
                }
                replies.push_back(std::move(reply));
              }
              ctx.respond(std::move(token), std::move(replies));
            },
            [&](const ClientGet& get, ResponseToken<ClientGet> token) -> Task<> {
              co_await answer_client_get(ctx, get, std::move(token));
            },
            [&](const RunTraffic& run, ResponseToken<RunTraffic> token) -> Task<> {
              actors::sharding::EntitySendOptions options;
              options.to = Addr{run.front};
              options.pod = Addr{cache->endpoint()};
              options.send_timeout = std::chrono::milliseconds{run.send_timeout_ms};
              TrafficReport report;
              while (!stop->load()) {
                for (const auto& id : run.carts) {
                  const std::uint64_t seq = ++report.sent;
                  auto served = co_await actors::sharding::request_entity(ctx, CartServe{id, seq}, options);
                  if (served) {
                    ++report.ok;
                  } else {
                    report.errors.push_back(fmt::format("{} #{}: {}", id, seq, served.error()));
                  }
                }
              }
              ctx.respond(std::move(token), std::move(report));
            });
      }
    }));

    // Telemetry on, so the tests can read the metrics.
    topology.local("system.telemeters").mount(ActorGroup().exec([](Context<> ctx) -> Task<> {
      while (co_await ctx.recv()) {
      }
    }));
    StartOptions start;
    start.node_no = static_cast<std::uint16_t>(i);
    std::string config = network::test::network_config(
        "127.0.0.1:0", i == 1 ? std::vector<std::string>{} : std::vector<std::string>{first_listen_});
    if (i == 1) {
      // No periodic health check: a pod leaves the map only when it unregisters or is reported.
      config += fmt::format(R"(
[sharding.manager]
shard_function = "{}"
rebalance_interval = "50ms"
rebalance_rate = 1.0
ping_timeout = "300ms"
health_check_interval = "1h"
storage.path = "{}"
)",
                            kPodNodesFunction, dir_.file("shards.state"));
    }
    config += fmt::format(R"(
[sharding.pod]
address = "{}"
shard_function = "{}"
retry_interval = "50ms"
refresh_interval = "50ms"
)",
                          name, kPodNodesFunction);
    start.config_toml = std::move(config);
    testing::ProxyOptions proxy_options;
    proxy_options.node_no = static_cast<std::uint16_t>(i);
    node.proxy = std::make_unique<testing::Proxy>(
        testing::proxy(std::move(topology), "client", std::move(start), proxy_options));
    // Read once: later nodes dial it without using node 1's proxy, which a test may be using.
    if (i == 1) first_listen_ = listen_of(*node.proxy);
  }

  TempDir dir_;
  std::string first_listen_;
  std::shared_ptr<CartWorld> world_ = std::make_shared<CartWorld>();
  std::deque<Node> nodes_;  // a deque: adding a node keeps references to the others valid
};

}  // namespace elfin::test
