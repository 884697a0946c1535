// The client's light node: system.network plus a remote group `kv` (unicast: the first connected
// pod in `pod_nodes` order), driven from the caller's thread through elfin::testing's proxy, the
// framework's way for a plain thread to send into a running system and wait for answers.
#include <elfin/kv/client.hpp>

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>
#include <elfin/topology.hpp>

namespace elfin::kv {

namespace pk = protocols::kv;
using Clock = std::chrono::steady_clock;

struct Client::Impl {
  std::mutex mutex;
  ClientOptions options;
  std::optional<testing::Proxy> proxy;
  // Writes carry a request id (protocols/kv): one sent again to another pod is applied once.
  std::uint64_t origin = 0;
  std::uint64_t sequence = 0;

  template <class R>
  R identified(R request) {
    std::lock_guard lock(mutex);
    request.origin = origin;
    request.sequence = ++sequence;
    return request;
  }

  [[nodiscard]] bool connected() {
    proxy->set_timeout(std::chrono::milliseconds{2000});
    try {
      auto info = proxy->request_fallible(network::GetNetworkInfo{}, proxy->system().group_addr("system.network"));
      return info && !info->peers.empty();
    } catch (const testing::ProxyError&) {
      return false;
    }
  }

  /// Sends `request` until it is answered, its deadline passes, or (for a conditional request)
  /// it may have been delivered.
  template <class R, class T>
  Result<T, pk::KvError> call(R request, bool conditional, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex);
    const auto deadline = Clock::now() + timeout;
    std::string last = "no pod connected";
    while (Clock::now() < deadline) {
      if (!connected()) {
        std::this_thread::sleep_for(std::chrono::milliseconds{20});  // waiting for a redial
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      proxy->set_timeout(std::max(left, std::chrono::milliseconds{1}));
      Result<Result<T, pk::KvError>, RequestError> answer = Err{RequestError{}};
      try {
        answer = proxy->request_fallible(request);
      } catch (const testing::ProxyError& e) {
        return Err{pk::KvError{pk::KvErrorKind::Timeout, 0, 0, 0,
                               fmt::format("no answer within {} ms: {}", timeout.count(), e.what())}};
      }
      if (answer) return std::move(*answer);
      last = to_string(answer.error());
      if (conditional) {
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
  Topology topology;
  topology.local("system.network").mount(network::blueprint());
  topology.local("kv").mount(network::remote_group({.nodes = options.pod_nodes}));
  std::string pods;
  for (const auto& pod : options.pods) pods += fmt::format("{}\"{}\"", pods.empty() ? "" : ", ", pod);
  StartOptions start;
  start.node_no = options.node;
  start.config_toml = fmt::format(R"([common.system.logging]
max_level = "Error"

[system.network]
discovery.predefined = [{}]
discovery.attempt_interval = "200ms"
ping_interval = "1s"
idle_timeout = "5s"
{}
)",
                                  pods, options.secret ? fmt::format("secret = \"{}\"", *options.secret) : "");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  // Unique per client incarnation: its node number and when it started.
  impl->origin =
      (std::uint64_t{options.node} << 48U) ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  testing::ProxyOptions proxy_options;
  proxy_options.node_no = options.node;
  proxy_options.timeout = options.timeout;
  try {
    impl->proxy.emplace(testing::proxy(std::move(topology), "kv", std::move(start), proxy_options));
  } catch (const testing::ProxyError& e) {
    return Err{fmt::format("the client node did not start: {}", e.what())};
  }
  const auto deadline = Clock::now() + options.timeout;
  while (!impl->connected()) {
    if (Clock::now() >= deadline) {
      return Err{fmt::format("no pod of {} connected within {} ms", pods, options.timeout.count())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
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
