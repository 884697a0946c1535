// A shard manager and several pods in one system, on real time with short intervals: each pod is
// a `sharding.pod` group of its own (`pod1`, `pod2`, ...) with its own cache, routing the
// `sharding` protocol to the manager; the test proxy talks to the manager. A FakeHost stands for
// a pod's entity group: it "runs" one entity per shard the pod owns and lets the test decide when
// the entities asked to stop are gone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/singleton.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "../temp_dir.hpp"
#include "carts.hpp"

namespace elfin::test {

using namespace std::chrono_literals;

/// One entity per owned shard; stops only when the test lets it (or at once when `prompt`).
class FakeHost final : public actors::sharding::EntityHost {
 public:
  explicit FakeHost(std::shared_ptr<actors::sharding::AssignmentCache> cache) : cache_(std::move(cache)) {}

  std::vector<std::uint64_t> stop(const std::set<std::uint32_t>& shards) override {
    std::lock_guard lock(mutex_);
    for (auto shard : shards) {
      asked_.insert(shard);
      if (prompt_) stopped_.insert(shard);
    }
    return {};  // no actors: the test stops them
  }
  std::vector<std::uint64_t> idle(std::chrono::nanoseconds) override { return {}; }
  std::size_t running(const std::set<std::uint32_t>& shards) const override {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (auto shard : shards) {
      if (asked_.contains(shard) && !stopped_.contains(shard)) ++n;
    }
    return n;
  }
  void set_prompt(bool prompt) {
    std::lock_guard lock(mutex_);
    prompt_ = prompt;
  }
  /// The entities asked to stop finish now.
  void release() {
    std::lock_guard lock(mutex_);
    stopped_.insert(asked_.begin(), asked_.end());
  }
  /// Forgets what was asked so far (the entities stopped before the part a test looks at).
  void clear() {
    std::lock_guard lock(mutex_);
    asked_.clear();
    stopped_.clear();
  }
  [[nodiscard]] std::set<std::uint32_t> asked() const {
    std::lock_guard lock(mutex_);
    return asked_;
  }

 private:
  std::shared_ptr<actors::sharding::AssignmentCache> cache_;
  mutable std::mutex mutex_;
  bool prompt_ = true;
  std::set<std::uint32_t> asked_;
  std::set<std::uint32_t> stopped_;
};

class PodCluster {
 public:
  static constexpr std::uint32_t kShards = 16;
  /// Worker threads, the same on every machine (a test may stall them all: CartWorld::hold_worker).
  static constexpr unsigned kWorkers = 2;

  /// `pods` pods named pod1..podN; regular rounds every `rebalance_interval`.
  /// `carts`: each pod runs a cart entity group `carts<N>` instead of a FakeHost.
  /// `singletons`: each pod runs the singleton group `scheduler<N>` (named "scheduler").
  /// `cut_off`: pods whose requests reach no manager from the start (until `bring_manager_back`).
  /// `manager_extra`: more keys for the manager's section.
  /// `hold_timeout`, `max_held`: the cart groups' (EntityOptions).
  explicit PodCluster(std::size_t pods, std::string rebalance_interval = "50ms", bool with_manager = true,
                      bool carts = false, std::string pod_extra = "", bool singletons = false,
                      const std::set<std::size_t>& cut_off = {}, std::string manager_extra = "",
                      std::chrono::milliseconds hold_timeout = std::chrono::seconds{10},
                      std::size_t max_held = actors::sharding::EntityOptions{}.max_held)
      : carts_(carts),
        hold_timeout_(hold_timeout),
        max_held_(max_held),
        singletons_(singletons),
        pod_extra_(std::move(pod_extra)),
        manager_extra_(std::move(manager_extra)) {
    for (std::size_t i = 1; i <= pods; ++i) {
      cut_off_.push_back(std::make_shared<std::atomic<bool>>(cut_off.contains(i)));
      auto cache = std::make_shared<actors::sharding::AssignmentCache>();
      caches_.push_back(cache);
      hosts_.push_back(std::make_shared<FakeHost>(cache));
      registries_.push_back(std::make_shared<actors::sharding::EntityRegistry>());
      singleton_registries_.push_back(std::make_shared<actors::sharding::EntityRegistry>());
      if (!carts) cache->add_host(hosts_.back());
    }
    proxy_ = std::make_unique<testing::Proxy>(start(std::move(rebalance_interval), with_manager));
  }

  [[nodiscard]] actors::sharding::AssignmentCache& cache(std::size_t pod) { return *caches_.at(pod - 1); }
  [[nodiscard]] FakeHost& host(std::size_t pod) { return *hosts_.at(pod - 1); }
  [[nodiscard]] static protocols::sharding::PodRef ref(std::size_t pod) {
    return protocols::sharding::PodRef{fmt::format("pod-{}", pod), 1000 + pod};
  }
  [[nodiscard]] testing::Proxy& proxy() { return *proxy_; }
  [[nodiscard]] actors::sharding::EntityRegistry& registry(std::size_t pod) { return *registries_.at(pod - 1); }
  [[nodiscard]] CartWorld& carts() { return *world_; }
  /// Where pod `pod` lists its singleton instance.
  [[nodiscard]] actors::sharding::EntityRegistry& singleton_registry(std::size_t pod) {
    return *singleton_registries_.at(pod - 1);
  }
  /// Gets `cart` through request_entity, sent to pod `pod`'s cart group.
  ClientAnswer client_get(const std::string& cart, std::size_t pod, std::chrono::milliseconds send_timeout) {
    proxy_->set_timeout(send_timeout + 5s);
    return proxy_
        ->request_fallible(ClientGet{cart, carts_of(pod).raw(), cache(pod).endpoint(),
                                     static_cast<std::uint32_t>(send_timeout.count()), -1, ""},
                           proxy_->system().group_addr("client"))
        .value();
  }
  [[nodiscard]] Addr carts_of(std::size_t pod) { return proxy_->system().group_addr(fmt::format("carts{}", pod)); }
  /// The pod whose cache says it owns `cart`'s shard now (0: none).
  std::size_t owner_of(const std::string& cart) {
    const auto shard = function_.shard_of(cart).value();
    for (std::size_t i = 1; i <= caches_.size(); ++i) {
      if (caches_[i - 1]->owns(shard)) return i;
    }
    return 0;
  }
  [[nodiscard]] Addr group(std::size_t pod) { return proxy_->system().group_addr(fmt::format("pod{}", pod)); }

  /// From now on the pods' requests to the manager reach no one (it is down as far as they see).
  void take_manager_down() { manager_down_->store(true); }
  /// Every pod's requests reach the manager again (also those cut off from the start).
  void bring_manager_back() {
    for (auto& cut : cut_off_) cut->store(false);
    manager_down_->store(false);
  }

  protocols::sharding::Assignments assignments() { return proxy_->request(protocols::sharding::GetAssignments{}); }
  std::size_t owned_in_map(std::size_t pod) { return assignments().shards_of(ref(pod)).size(); }

 private:
  testing::Proxy start(std::string rebalance_interval, bool with_manager) {
    Topology topology;
    auto manager = topology.local("sharding.manager");
    if (with_manager) {
      actors::shard_manager::Options options;
      const std::string path = dir_.file("shards.state");
      options.storage = [path](const actors::shard_manager::Config&)
          -> Result<std::unique_ptr<actors::shard_manager::AssignmentStorage>, std::string> {
        return actors::shard_manager::open_storage([&] {
          actors::shard_manager::Config config;
          config.storage.path = path;
          return config;
        }());
      };
      manager.mount(actors::shard_manager::blueprint(std::move(options)));
    } else {
      // A manager that never answers: requests to it are dropped (Ignored).
      manager.mount(ActorGroup().exec([](Context<> ctx) -> Task<> {
        while (co_await ctx.recv()) {
        }
      }));
    }
    std::string config = fmt::format(R"(
[sharding.manager]
shard_function = "jump-xxh64/1:{}"
rebalance_interval = "{}"
rebalance_retry_interval = "50ms"
ping_timeout = "1s"
rebalance_rate = 1.0
{}
)",
                                     kShards, rebalance_interval, manager_extra_);
    // Holds every request it gets, unanswered, for as long as the system runs.
    auto holder = topology.local("void");
    holder.mount(ActorGroup().exec([](Context<> ctx) -> Task<> {
      std::vector<ResponseToken<CartHold>> held;
      while (auto envelope = co_await ctx.recv()) {
        if (envelope->is<CartHold>()) held.push_back(envelope->take_token<CartHold>());
      }
    }));
    for (std::size_t i = 1; i <= caches_.size(); ++i) {
      const std::string name = fmt::format("pod{}", i);
      auto pod = topology.local(name);
      pod.mount(actors::sharding::pod({caches_[i - 1], ref(i).incarnation}));
      // The manager "goes down" for the pods when the test says so: their requests reach no one.
      pod.route_to(manager, [down = manager_down_, cut = cut_off_[i - 1]](const Envelope& e) {
        return e.protocol() == "sharding" && !down->load() && !cut->load();
      });
      if (carts_) {
        actors::sharding::EntityOptions options;
        options.cache = caches_[i - 1];
        options.shard_function = fmt::format("jump-xxh64/1:{}", kShards);
        options.entity_id = cart_id;
        options.registry = registries_[i - 1];
        options.name = "carts";  // what every pod's cart group is located as
        options.hold_timeout = hold_timeout_;
        options.max_held = max_held_;
        const std::string address = ref(i).address;
        auto carts = topology.local(fmt::format("carts{}", i));
        carts.route_to(holder, [](const Envelope& e) { return e.is<CartHold>(); });
        carts.mount(actors::sharding::entities(
            std::move(options),
            [world = world_, address](Context<NoConfig, std::string> ctx) { return cart(ctx, world, address); }));
      }
      config += fmt::format(R"(
[{}]
address = "{}"
shard_function = "jump-xxh64/1:{}"
retry_interval = "20ms"
refresh_interval = "50ms"
{}
{}
)",
                            name, ref(i).address, kShards,
                            pod_extra_.find("entity_termination_timeout") == std::string::npos
                                ? "entity_termination_timeout = \"5s\""
                                : "",
                            pod_extra_);
    }
    if (singletons_) {
      for (std::size_t i = 1; i <= caches_.size(); ++i) {
        actors::sharding::SingletonOptions options;
        options.cache = caches_[i - 1];
        options.name = "scheduler";
        options.shard_function = fmt::format("jump-xxh64/1:{}", kShards);
        options.registry = singleton_registries_[i - 1];
        const std::string address = ref(i).address;
        // A singleton that only waits: it runs without anyone writing to it.
        topology.local(fmt::format("scheduler{}", i))
            .mount(actors::sharding::singleton(std::move(options), [world = world_, address](Context<> ctx) -> Task<> {
              world->started("scheduler", address);
              while (co_await ctx.recv()) {
              }
              world->stopped("scheduler", address);
            }));
      }
    }
    if (carts_) topology.local("client").mount(ActorGroup().exec(client));
    // Telemetry on, so the tests can read the metrics.
    topology.local("system.telemeters").mount(ActorGroup().exec([](Context<> ctx) -> Task<> {
      while (co_await ctx.recv()) {
      }
    }));
    StartOptions start;
    start.workers = kWorkers;
    start.config_toml = std::move(config);
    return testing::proxy(std::move(topology), "sharding.manager", std::move(start), testing::ProxyOptions{});
  }

  std::shared_ptr<std::atomic<bool>> manager_down_ = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::shared_ptr<std::atomic<bool>>> cut_off_;  ///< per pod: its requests reach no manager
  bool carts_ = false;
  std::chrono::milliseconds hold_timeout_;
  std::size_t max_held_;
  bool singletons_ = false;
  std::string pod_extra_;
  std::string manager_extra_;
  std::shared_ptr<CartWorld> world_ = std::make_shared<CartWorld>();
  std::vector<std::shared_ptr<actors::sharding::EntityRegistry>> registries_;
  std::vector<std::shared_ptr<actors::sharding::EntityRegistry>> singleton_registries_;
  hashing::ShardFunction function_ = hashing::ShardFunction::parse(fmt::format("jump-xxh64/1:{}", kShards)).value();
  TempDir dir_;
  std::vector<std::shared_ptr<actors::sharding::AssignmentCache>> caches_;
  std::vector<std::shared_ptr<FakeHost>> hosts_;
  std::unique_ptr<testing::Proxy> proxy_;
};

}  // namespace elfin::test
