// LightNode: a program joins a cluster as a node of its own — only system.network, a caller and
// remote groups for the cluster's groups — and calls those groups from any of its threads.
//
//   auto node = elfin::network::LightNode::start({
//       .peers = {"tcp://10.0.0.1:9201", "tcp://10.0.0.2:9201"},
//       .groups = {{.name = "counters", .nodes = {1, 2}}},
//   });
//   if (!node) { fmt::print(stderr, "{}\n", node.error()); return 1; }
//   if (auto up = node->wait_connected(5s); !up) { ... }            // every group reachable
//   std::ignore = node->send("counters", Increment{});
//   auto sum = node->request("counters", Summarize{}, 2s).get();       // Result<uint64_t, RequestError>
//   node->request("counters", Summarize{}, 2s, [](auto answer) {...}); // or a callback
//   node->stop();                                                       // or the destructor
//
// Requests are elfin::Caller's (see caller.hpp): many in flight at once from any threads, over the
// one connection per peer; each answered exactly once, by its deadline at the latest (TimedOut).
// A peer that goes away answers the requests waiting on it Failed; `stop` answers every request
// still waiting Stopped before the node leaves. A remote group is routed as `network::remote_group`
// routes (Unicast: the first connected node in `nodes` order).
//
// Thread safety: `send`, `request`, `connected`, `wait_connected` and `stop` from any thread;
// `start`, moves and the destructor from the owning thread, once no other thread uses the node.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/caller.hpp>
#include <elfin/message.hpp>
#include <elfin/network/network.hpp>
#include <elfin/result.hpp>
#include <elfin/system.hpp>

namespace elfin::network {

/// A group of the cluster, as this node sees it (`RemoteGroupOptions` by name).
struct LightNodeGroup {
  /// The local name the node's calls use.
  std::string name;
  /// The nodes it lives on.
  std::vector<std::uint16_t> nodes{};
  Routing routing = Routing::Unicast;
  /// Its name on those nodes; empty: `name`.
  std::string remote_name{};
};

struct LightNodeOptions {
  /// The peers to dial (and redial), "tcp://HOST:PORT".
  std::vector<std::string> peers{};
  std::vector<LightNodeGroup> groups{};
  /// This node's number, unique in the cluster; 0: one derived from the process id (30000..59999).
  std::uint16_t node = 0;
  /// The cluster secret, if it has one.
  std::optional<std::string> secret{};
  /// Where to listen; usually nothing (a light node dials, nobody dials it).
  std::vector<std::string> listen{};
  /// The longest wait between dial attempts; pings; how long a silent connection lives.
  std::chrono::milliseconds attempt_interval{200};
  std::chrono::milliseconds ping_interval{1'000};
  std::chrono::milliseconds idle_timeout{5'000};
  /// Log lines below this level are not written ("Error", "Warn", "Info", ...).
  std::string max_log_level = "Warn";
  /// Worker threads of the node's runtime (its forwarders and network actors).
  unsigned workers = 1;
};

class LightNode {
 public:
  /// Starts the node (it dials its peers at once); does not wait for a connection.
  [[nodiscard]] static Result<LightNode, std::string> start(LightNodeOptions options);

  LightNode(LightNode&&) noexcept;
  LightNode& operator=(LightNode&&) noexcept;
  /// `stop()`.
  ~LightNode();

  /// Waits until every group has a connected node (true), or `timeout` (an error naming who is
  /// missing and the latest refusals).
  [[nodiscard]] Result<void, std::string> wait_connected(std::chrono::milliseconds timeout) const;
  /// Waits until every node in `nodes` is connected.
  [[nodiscard]] Result<void, std::string> wait_connected(const std::vector<std::uint16_t>& nodes,
                                                         std::chrono::milliseconds timeout) const;
  /// Is `node` connected now (handshake done)? Lock-free.
  [[nodiscard]] bool connected(std::uint16_t node) const;

  /// Sends to a group by its `LightNodeGroup::name`, waiting up to `timeout` while the way out is full.
  template <Message M>
  SendResult<M> send(std::string_view group, M message, std::chrono::milliseconds timeout = std::chrono::seconds{5}) {
    return caller().send_to(group_addr(group), std::move(message), timeout);
  }
  /// Requests from a group; answered through the future by `timeout` at the latest.
  template <Request R>
  [[nodiscard]] std::future<Answer<typename R::Response>> request(std::string_view group, R request,
                                                                  std::chrono::milliseconds timeout) {
    return caller().request_to(group_addr(group), std::move(request), timeout);
  }
  /// Requests from a group; `on_answer` runs once, on the thread that settles the request.
  template <Request R, std::invocable<Answer<typename R::Response>> F>
  void request(std::string_view group, R request, std::chrono::milliseconds timeout, F on_answer) {
    caller().request_to(group_addr(group), std::move(request), timeout, std::move(on_answer));
  }

  /// Answers every outstanding request (Stopped), then terminates the node and waits for it.
  /// Idempotent.
  void stop();

  /// The caller behind `send` and `request` (for addresses learnt from answers).
  [[nodiscard]] Caller& caller() const;
  /// A group's address here (the null address for an unknown name: sends fail UnknownAddr).
  [[nodiscard]] Addr group_addr(std::string_view group) const;
  [[nodiscard]] std::uint16_t node_no() const;
  /// What system.network reports (listening addresses, peers, refusals).
  [[nodiscard]] NetworkInfo info() const;

  struct Impl;

 private:
  explicit LightNode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace elfin::network
