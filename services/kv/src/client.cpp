// The client's light node (elfin::network::LightNode): system.network, a remote group `kv`
// (unicast: the first connected pod in `pod_nodes` order) and one remote group per pod (its front
// alone), by which a request goes straight to the pod whose replica leads the key's shard. Every
// call is asynchronous underneath (the blocking ones wait on their future); all share the node's
// connections and the leader table.
#include <elfin/kv/client.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <elfin/actors/kv.hpp>
#include <elfin/network/light_node.hpp>

namespace elfin::kv {

namespace pk = protocols::kv;
using Clock = std::chrono::steady_clock;

namespace {

/// The local name of the remote group that is pod `node`'s front alone.
std::string pod_group(std::uint16_t node) { return fmt::format("kv.pod.{}", node); }

}  // namespace

struct Client::Impl {
  ClientOptions options;
  std::unique_ptr<network::LightNode> node;               ///< set once connect() started it
  Addr any_pod;                                           ///< `kv`: the first connected pod
  std::vector<std::pair<std::uint16_t, Addr>> pod_addrs;  ///< each pod's front alone
  // Writes carry a request id (protocols/kv): one sent again to another pod is applied once.
  std::uint64_t origin = 0;
  std::atomic<std::uint64_t> sequence{0};

  // Which pod leads each shard, as the fronts' answers said (a front answers with the node whose
  // replica served the request as leader, and with its shard count, so keys map to shards here as
  // they do there). Until the first answer the shard count is unknown and every request goes to
  // `kv`.
  std::mutex leaders_mutex;
  pk::ShardId shards = 0;
  std::vector<std::uint16_t> leaders;  ///< per shard: the leader's node, 0: unknown

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

  [[nodiscard]] const Addr* pod_addr(std::uint16_t pod) const {
    for (const auto& [n, addr] : pod_addrs) {
      if (n == pod) return &addr;
    }
    return nullptr;
  }

  /// Where a request for `key` goes: the pod cached as its shard's leader (0: none known).
  struct Route {
    pk::ShardId shard = 0;
    std::uint16_t pod = 0;
  };
  Route route(std::string_view key) {
    std::lock_guard lock(leaders_mutex);
    if (shards == 0) return {};
    const pk::ShardId shard = actors::kv::shard_of(key, shards);
    return {shard, leaders[shard]};
  }

  /// An answer for `key` named its shard's leader (and the fronts' shard count).
  void learn(std::string_view key, std::uint64_t leader, pk::ShardId answer_shards) {
    if (leader == 0 || pod_addr(static_cast<std::uint16_t>(leader)) == nullptr) return;
    std::lock_guard lock(leaders_mutex);
    if (answer_shards != 0 && answer_shards != shards) {
      shards = answer_shards;
      leaders.assign(shards, 0);
    }
    if (shards == 0) return;
    leaders[actors::kv::shard_of(key, shards)] = static_cast<std::uint16_t>(leader);
  }

  /// A front's leader table: fills the shards not known here yet.
  void take(const pk::LeaderTable& table) {
    if (table.shards == 0 || table.leaders.size() != table.shards) return;
    std::lock_guard lock(leaders_mutex);
    if (table.shards != shards) {
      shards = table.shards;
      leaders.assign(shards, 0);
    }
    for (pk::ShardId shard = 0; shard < shards; ++shard) {
      const std::uint16_t leader = table.leaders[shard];
      if (leaders[shard] == 0 && leader != 0 && pod_addr(leader) != nullptr) leaders[shard] = leader;
    }
  }

  /// Asks every connected pod's front for its leader table, waiting up to `wait` for the answers
  /// (a front that does not answer leaves the answers to teach the client).
  void ask_leader_tables(std::chrono::milliseconds wait) {
    std::vector<std::future<Answer<Result<pk::LeaderTable, pk::KvError>>>> tables;
    for (const auto& [pod, addr] : pod_addrs) {
      if (node->connected(pod)) tables.push_back(node->caller().request_to(addr, pk::Leaders{}, wait));
    }
    for (auto& table : tables) {
      auto answer = table.get();  // by `wait` at the latest
      if (answer && *answer) take(answer->value());
    }
  }

  /// Pod `pod` failed a request for `shard`: the next ones go to any pod until an answer names the
  /// leader again.
  void forget(pk::ShardId shard, std::uint16_t pod) {
    std::lock_guard lock(leaders_mutex);
    if (shard < leaders.size() && leaders[shard] == pod) leaders[shard] = 0;
  }

  // Requests in flight and the retry timer. An attempt's answer arrives on whichever thread settles
  // it (the network's I/O thread, the caller's timer thread, the calling thread); the answer
  // handler only decides, and every further attempt runs on `retrier`, so no answer thread ever
  // sleeps or sends.
  std::atomic<std::size_t> in_flight{0};
  std::mutex retry_mutex;
  std::condition_variable retry_wake;
  std::multimap<Clock::time_point, std::function<void(bool stopped)>> retries;
  bool stopping = false;
  std::thread retrier;

  void run_retries() {
    std::unique_lock lock(retry_mutex);
    while (!stopping) {
      if (retries.empty()) {
        retry_wake.wait(lock);
        continue;
      }
      if (retry_wake.wait_until(lock, retries.begin()->first) == std::cv_status::no_timeout && !stopping) continue;
      if (stopping || retries.empty() || retries.begin()->first > Clock::now()) continue;
      auto next = std::move(retries.begin()->second);
      retries.erase(retries.begin());
      lock.unlock();
      next(false);
      lock.lock();
    }
    auto left = std::move(retries);
    lock.unlock();
    for (auto& [when, retry] : left) retry(true);
  }

  /// Runs `retry` on the retrier after `delay`, or answers it stopped at once when the client is
  /// being destroyed.
  void later(std::chrono::milliseconds delay, std::function<void(bool stopped)> retry) {
    {
      std::lock_guard lock(retry_mutex);
      if (!stopping) {
        retries.emplace(Clock::now() + delay, std::move(retry));
        retry_wake.notify_one();
        return;
      }
    }
    retry(true);
  }

  /// Stops the retrier (its waiting retries answer Unavailable), then the node (its requests in
  /// flight answer Stopped, hence Unavailable).
  void shut_down() {
    {
      std::lock_guard lock(retry_mutex);
      stopping = true;
      retry_wake.notify_one();
    }
    if (retrier.joinable()) retrier.join();
    if (node) node->stop();
  }

  /// One call: its request, its deadline and what its attempts learnt.
  template <class R, class T>
  struct Call {
    R request;
    bool routed = false;
    bool conditional = false;
    std::chrono::milliseconds timeout{};
    Clock::time_point deadline{};
    std::string last = "no pod connected";
    bool skip_cache = false;  // the cached leader's pod failed this request once: any pod now
    Route to{};
    std::promise<Result<T, pk::KvError>> promise;
  };

  template <class R, class T>
  void finish(const std::shared_ptr<Call<R, T>>& call, std::type_identity_t<Result<T, pk::KvError>> result) {
    in_flight.fetch_sub(1, std::memory_order_relaxed);
    call->promise.set_value(std::move(result));
  }

  /// Sends `request` until it is answered, its deadline passes, or (for a conditional request)
  /// it may have been delivered. A `routed` request goes to its key's shard's leader's pod when the
  /// table knows it, else (and after that pod failed it) to the first connected pod.
  template <class R, class T>
  std::future<Result<T, pk::KvError>> call(R request, bool routed, bool conditional,
                                           std::chrono::milliseconds timeout) {
    auto call = std::make_shared<Call<R, T>>();
    auto future = call->promise.get_future();
    if (in_flight.fetch_add(1, std::memory_order_relaxed) >= options.max_in_flight) {
      finish(call, Err{pk::KvError{
                       pk::KvErrorKind::Unavailable, 0, 0, 0,
                       fmt::format("{} requests in flight already (max_in_flight); not sent", options.max_in_flight)}});
      return future;
    }
    call->request = std::move(request);
    call->routed = routed;
    call->conditional = conditional;
    call->timeout = timeout;
    call->deadline = Clock::now() + timeout;
    attempt(call);
    return future;
  }

  template <class R, class T>
  std::optional<std::string_view> key_of(const Call<R, T>& call) {
    if constexpr (requires { call.request.key; }) {
      if (call.routed) return std::string_view(call.request.key);
    }
    return std::nullopt;
  }

  template <class R, class T>
  void retry(const std::shared_ptr<Call<R, T>>& call, std::chrono::milliseconds delay) {
    later(delay, [this, call](bool stopped) {
      if (stopped) {
        finish(call, Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0, "the client is being destroyed"}});
      } else {
        attempt(call);
      }
    });
  }

  template <class R, class T>
  void attempt(const std::shared_ptr<Call<R, T>>& call) {
    if (Clock::now() >= call->deadline) {
      finish(call,
             Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0,
                             fmt::format("no pod answered within {} ms: {}", call->timeout.count(), call->last)}});
      return;
    }
    if (!any_pod_connected()) {
      retry(call, std::chrono::milliseconds{20});  // waiting for a redial
      return;
    }
    const auto key = key_of(*call);
    call->to = key && !call->skip_cache ? route(*key) : Route{};
    const Addr* addr = call->to.pod != 0 && node->connected(call->to.pod) ? pod_addr(call->to.pod) : nullptr;
    if (addr == nullptr) call->to.pod = 0;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(call->deadline - Clock::now());
    node->caller().request_to(
        addr != nullptr ? *addr : any_pod, call->request, std::max(left, std::chrono::milliseconds{1}),
        [this, call](Answer<Result<T, pk::KvError>> answer) { answered(call, std::move(answer)); });
  }

  template <class R, class T>
  void answered(const std::shared_ptr<Call<R, T>>& call, Answer<Result<T, pk::KvError>> answer) {
    const Route to = call->to;
    if (answer) {
      if (const auto key = key_of(*call)) {
        if (!*answer) {
          learn(*key, answer->error().leader_hint, 0);
        } else if constexpr (requires { answer->value().leader; }) {
          learn(*key, answer->value().leader, answer->value().shards);
        }
      }
      finish(call, std::move(*answer));
      return;
    }
    const RequestError& error = answer.error();
    if (error == RequestError::TimedOut) {
      // A pod that holds a request this long (paused, overloaded) is no shard's first choice.
      if (to.pod != 0) forget(to.shard, to.pod);
      finish(call,
             Err{pk::KvError{pk::KvErrorKind::Timeout, 0, 0, 0,
                             fmt::format("no answer within {} ms: {}", call->timeout.count(), to_string(error))}});
      return;
    }
    if (error == RequestError::Stopped) {  // the client is being destroyed
      finish(call, Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0, to_string(error)}});
      return;
    }
    call->last = to_string(error);
    // A request that reached no pod was not applied anywhere: even a conditional one may go again.
    if (call->conditional && !error.reached_no_one()) {
      if (to.pod != 0) forget(to.shard, to.pod);
      finish(call, Err{pk::KvError{pk::KvErrorKind::Timeout, 0, 0, 0,
                                   fmt::format("the pod gave no answer ({}); the outcome is unknown", call->last)}});
      return;
    }
    if (to.pod != 0) {
      // The leader's pod went away: at once to another pod, whose front finds the new leader.
      forget(to.shard, to.pod);
      call->skip_cache = true;
      retry(call, std::chrono::milliseconds{0});
      return;
    }
    retry(call, std::chrono::milliseconds{20});
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
  for (const std::uint16_t pod : options.pod_nodes) {
    node_options.groups.push_back({.name = pod_group(pod), .nodes = {pod}, .remote_name = "kv"});
  }
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
  impl->any_pod = impl->node->group_addr("kv");
  for (const std::uint16_t pod : options.pod_nodes) {
    impl->pod_addrs.emplace_back(pod, impl->node->group_addr(pod_group(pod)));
  }
  // One pod connected is enough (the per-pod groups of the pods that are down never are).
  const auto deadline = Clock::now() + options.timeout;
  while (!impl->any_pod_connected()) {
    if (Clock::now() >= deadline) {
      auto up = impl->node->wait_connected(std::vector<std::uint16_t>{options.pod_nodes.front()},
                                           std::chrono::milliseconds{0});
      return Err{fmt::format("no pod of {} connected: {}", fmt::join(options.pods, ", "),
                             up ? std::string("none within the timeout") : up.error())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  impl->ask_leader_tables(std::min(options.timeout, std::chrono::milliseconds{2'000}));
  impl->retrier = std::thread([raw = impl.get()] { raw->run_retries(); });
  return Client(std::move(impl));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->shut_down();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Client::~Client() {
  if (impl_) impl_->shut_down();
}

std::uint16_t Client::node() const { return impl_->options.node; }

std::future<Result<pk::Written, pk::KvError>> Client::async_put(std::string key, std::string value) {
  return impl_->call<pk::Put, pk::Written>(impl_->identified(pk::Put{std::move(key), std::move(value)}), true, false,
                                           impl_->options.timeout);
}
std::future<Result<pk::Found, pk::KvError>> Client::async_get(std::string key, bool stale) {
  // A stale read is the asked pod's own state: any pod serves it.
  return impl_->call<pk::Get, pk::Found>(pk::Get{std::move(key), stale}, !stale, false, impl_->options.timeout);
}
std::future<Result<pk::Deleted, pk::KvError>> Client::async_remove(std::string key) {
  return impl_->call<pk::Delete, pk::Deleted>(impl_->identified(pk::Delete{std::move(key)}), true, false,
                                              impl_->options.timeout);
}
std::future<Result<pk::Written, pk::KvError>> Client::async_cas(std::string key, std::string value,
                                                                pk::Version expected_version) {
  return impl_->call<pk::Cas, pk::Written>(
      impl_->identified(pk::Cas{std::move(key), std::move(value), expected_version}), true, true,
      impl_->options.timeout);
}
std::future<Result<pk::Deleted, pk::KvError>> Client::async_delete_if_version(std::string key,
                                                                              pk::Version expected_version) {
  return impl_->call<pk::DeleteIfVersion, pk::Deleted>(
      impl_->identified(pk::DeleteIfVersion{std::move(key), expected_version}), true, true, impl_->options.timeout);
}
std::future<Result<pk::Scanned, pk::KvError>> Client::async_scan(pk::Scan request) {
  // A scan over every shard may create all of them: the front gives it scan_timeout (30 s).
  const auto timeout =
      request.shard ? impl_->options.timeout : std::max(impl_->options.timeout, std::chrono::milliseconds{40'000});
  return impl_->call<pk::Scan, pk::Scanned>(std::move(request), false, false, timeout);
}

Result<pk::Written, pk::KvError> Client::put(std::string key, std::string value) {
  return async_put(std::move(key), std::move(value)).get();
}
Result<pk::Found, pk::KvError> Client::get(std::string key, bool stale) {
  return async_get(std::move(key), stale).get();
}
Result<pk::Deleted, pk::KvError> Client::remove(std::string key) { return async_remove(std::move(key)).get(); }
Result<pk::Written, pk::KvError> Client::cas(std::string key, std::string value, pk::Version expected_version) {
  return async_cas(std::move(key), std::move(value), expected_version).get();
}
Result<pk::Deleted, pk::KvError> Client::delete_if_version(std::string key, pk::Version expected_version) {
  return async_delete_if_version(std::move(key), expected_version).get();
}
Result<pk::Scanned, pk::KvError> Client::scan(pk::Scan request) { return async_scan(std::move(request)).get(); }

}  // namespace elfin::kv
