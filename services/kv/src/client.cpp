// The client's light node (elfin::network::LightNode): system.network plus a remote group `kv`
// (unicast: the first connected pod in `pod_nodes` order). Each call is one request in flight at a
// time from its thread; calls from many threads share the node's connections.
#include <elfin/kv/client.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <elfin/network/light_node.hpp>

namespace elfin::kv {

namespace pk = protocols::kv;
using Clock = std::chrono::steady_clock;

struct Client::Impl {
  ClientOptions options;
  std::unique_ptr<network::LightNode> node;  ///< set once connect() started it
  // Writes carry a request id (protocols/kv): one sent again to another pod is applied once.
  std::uint64_t origin = 0;
  std::atomic<std::uint64_t> sequence{0};

  template <class R>
  R identified(R request) {
    request.origin = origin;
    request.sequence = sequence.fetch_add(1, std::memory_order_relaxed) + 1;
    return request;
  }

  [[nodiscard]] bool any_pod_connected() const {
    return std::any_of(options.pod_nodes.begin(), options.pod_nodes.end(),
                       [&](std::uint16_t n) { return node->connected(n); });
  }

  /// Sends `request` until it is answered, its deadline passes, or (for a conditional request)
  /// it may have been delivered. Many calls run at once, each with its own request in flight.
  template <class R, class T>
  Result<T, pk::KvError> call(R request, bool conditional, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::string last = "no pod connected";
    while (Clock::now() < deadline) {
      if (!any_pod_connected()) {
        std::this_thread::sleep_for(std::chrono::milliseconds{20});  // waiting for a redial
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      auto answer = node->request("kv", request, std::max(left, std::chrono::milliseconds{1})).get();
      if (answer) return std::move(*answer);
      const RequestError& error = answer.error();
      if (error == RequestError::TimedOut) {
        return Err{pk::KvError{pk::KvErrorKind::Timeout, 0, 0, 0,
                               fmt::format("no answer within {} ms: {}", timeout.count(), to_string(error))}};
      }
      if (error == RequestError::Stopped) {  // the client is being destroyed
        return Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0, to_string(error)}};
      }
      last = to_string(error);
      // A request that reached no pod was not applied anywhere: even a conditional one may go again.
      if (conditional && !error.reached_no_one()) {
        return Err{pk::KvError{pk::KvErrorKind::Timeout, 0, 0, 0,
                               fmt::format("the pod gave no answer ({}); the outcome is unknown", last)}};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    return Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0,
                           fmt::format("no pod answered within {} ms: {}", timeout.count(), last)}};
  }
};

Result<Client, std::string> Client::connect(ClientOptions options) {
  if (options.pods.empty()) return Err{std::string("no pod addresses given")};
  if (options.pod_nodes.empty()) {
    for (std::size_t i = 0; i < options.pods.size(); ++i)
      options.pod_nodes.push_back(static_cast<std::uint16_t>(i + 1));
  }
  if (options.node == 0) options.node = static_cast<std::uint16_t>(30000 + ::getpid() % 30000);
  network::LightNodeOptions node_options;
  node_options.peers = options.pods;
  node_options.groups = {{.name = "kv", .nodes = options.pod_nodes}};
  node_options.node = options.node;
  node_options.secret = options.secret;
  node_options.max_log_level = "Error";
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  // Unique per client incarnation: its node number and when it started.
  impl->origin =
      (std::uint64_t{options.node} << 48U) ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  auto node = network::LightNode::start(std::move(node_options));
  if (!node) return Err{fmt::format("the client node did not start: {}", node.error())};
  impl->node = std::make_unique<network::LightNode>(std::move(*node));
  if (auto up = impl->node->wait_connected(options.timeout); !up) {
    return Err{fmt::format("no pod of {} connected: {}", fmt::join(options.pods, ", "), up.error())};
  }
  return Client(std::move(impl));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

std::uint16_t Client::node() const { return impl_->options.node; }

Result<pk::Written, pk::KvError> Client::put(std::string key, std::string value) {
  return impl_->call<pk::Put, pk::Written>(impl_->identified(pk::Put{std::move(key), std::move(value)}), false,
                                           impl_->options.timeout);
}
Result<pk::Found, pk::KvError> Client::get(std::string key, bool stale) {
  return impl_->call<pk::Get, pk::Found>(pk::Get{std::move(key), stale}, false, impl_->options.timeout);
}
Result<pk::Deleted, pk::KvError> Client::remove(std::string key) {
  return impl_->call<pk::Delete, pk::Deleted>(impl_->identified(pk::Delete{std::move(key)}), false,
                                              impl_->options.timeout);
}
Result<pk::Written, pk::KvError> Client::cas(std::string key, std::string value, pk::Version expected_version) {
  return impl_->call<pk::Cas, pk::Written>(
      impl_->identified(pk::Cas{std::move(key), std::move(value), expected_version}), true, impl_->options.timeout);
}
Result<pk::Deleted, pk::KvError> Client::delete_if_version(std::string key, pk::Version expected_version) {
  return impl_->call<pk::DeleteIfVersion, pk::Deleted>(
      impl_->identified(pk::DeleteIfVersion{std::move(key), expected_version}), true, impl_->options.timeout);
}
Result<pk::Scanned, pk::KvError> Client::scan(pk::Scan request) {
  // A scan over every shard may create all of them: the front gives it scan_timeout (30 s).
  const auto timeout =
      request.shard ? impl_->options.timeout : std::max(impl_->options.timeout, std::chrono::milliseconds{40'000});
  return impl_->call<pk::Scan, pk::Scanned>(std::move(request), false, timeout);
}

}  // namespace elfin::kv
