// A shard manager under test with fake pods (fake_pods.hpp), on virtual time: the manager's
// intervals and timeouts fire only when the test advances the clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/shard_manager/redis_storage.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "../temp_dir.hpp"
#include "fake_pods.hpp"

namespace elfin::test {

/// A health check the test decides: pods it names are alive (or dead) whatever the ping says;
/// the others are judged by the direct ping.
class ScriptedHealthCheck final : public actors::shard_manager::HealthCheck {
 public:
  void set(const protocols::sharding::PodRef& pod, actors::shard_manager::Health health) {
    std::lock_guard lock(mutex_);
    verdicts_[pod] = health;
  }
  actors::shard_manager::Health check(const protocols::sharding::PodEntry& pod,
                                      actors::shard_manager::PingOutcome ping) override {
    std::lock_guard lock(mutex_);
    if (auto it = verdicts_.find(pod.pod); it != verdicts_.end()) return it->second;
    return direct_.check(pod, ping);
  }

 private:
  std::mutex mutex_;
  std::map<protocols::sharding::PodRef, actors::shard_manager::Health> verdicts_;
  actors::shard_manager::DirectPingHealthCheck direct_;
};

class Cluster {
 public:
  /// `config` is the body of the manager's section.
  /// `redis_port`: keep the state in the Redis server on that port instead of a file.
  explicit Cluster(std::string config, std::optional<std::uint16_t> redis_port = std::nullopt)
      : redis_port_(redis_port),
        dir_(std::make_shared<TempDir>()),
        world_(std::make_shared<World>()),
        control_(std::make_shared<FlakyStorage::Control>()),
        health_(std::make_shared<ScriptedHealthCheck>()),
        proxy_(start(std::move(config))) {
    // The first message starts the manager, which loads the storage.
    std::ignore = assignments();
  }

  [[nodiscard]] protocols::sharding::PodRef pod(std::uint32_t key, std::uint64_t incarnation = 1) const {
    return protocols::sharding::PodRef{fmt::format("10.0.0.{}:54321", key % 1000), incarnation};
  }

  /// Starts fake pod `key` (a new actor) as `ref`; returns its endpoint.
  std::uint64_t spawn(std::uint32_t key, const protocols::sharding::PodRef& ref) {
    auto endpoint = proxy_.request_fallible(StartPod{key, ref}, proxy_.system().group_addr("pods"));
    REQUIRE(endpoint);
    endpoints_[key] = *endpoint;
    return *endpoint;
  }

  /// Starts pod `key` and registers it.
  Result<protocols::sharding::Registered, protocols::sharding::ShardingError> join(std::uint32_t key,
                                                                                   std::string version = "1.0.0",
                                                                                   std::uint64_t incarnation = 1,
                                                                                   std::string function = {}) {
    const auto ref = pod(key, incarnation);
    const std::uint64_t endpoint = spawn(key, ref);
    return register_pod(ref, endpoint, std::move(version), std::move(function));
  }

  Result<protocols::sharding::Registered, protocols::sharding::ShardingError> register_pod(
      const protocols::sharding::PodRef& ref, std::uint64_t endpoint, std::string version, std::string function = {}) {
    if (function.empty()) function = assignments().shard_function;
    return proxy_.request(protocols::sharding::Register{ref, endpoint, std::move(version), std::move(function)});
  }

  /// A graceful stop: the pod refuses new shards (Draining), stops its entities, then unregisters.
  Result<Unit, protocols::sharding::ShardingError> leave(std::uint32_t key, std::uint64_t incarnation = 1) {
    auto behaviour = world_->behaviour(key);
    behaviour.refuse_assigns = true;
    world_->set_behaviour(key, behaviour);
    world_->on_death(pod(key, incarnation));
    return proxy_.request(protocols::sharding::Unregister{pod(key, incarnation)});
  }

  void kill(std::uint32_t key) { proxy_.send_to(proxy_.system().group_addr("pods"), KillPod{key}); }

  void report(const protocols::sharding::PodRef& pod) {
    proxy_.send(protocols::sharding::ReportUnhealthyPod{pod, protocols::sharding::PodRef{"reporter:1", 1}});
  }

  protocols::sharding::Assignments assignments() { return proxy_.request(protocols::sharding::GetAssignments{}); }

  /// How many shards the manager's map gives `ref`.
  std::size_t owned(const protocols::sharding::PodRef& ref) { return assignments().shards_of(ref).size(); }

  /// Moves virtual time; the system settles after each timer.
  void advance(std::chrono::nanoseconds by) { proxy_.advance(by); }
  /// Lets everything already under way finish (no time passes).
  void settle() { proxy_.advance(std::chrono::nanoseconds{0}); }

  /// The manager's metric `name` (a gauge or counter), 0 if it has none yet.
  double metric(std::string_view name) {
    double value = 0;
    for (const auto& sample : proxy_.system().scrape_metrics()) {
      if (sample.name != name) continue;
      for (const auto& [label, text] : sample.labels) {
        if (label == "actor_group" && text == "sharding.manager") value += sample.value;
      }
    }
    return value;
  }
  /// How many values the manager's histogram `name` recorded.
  std::uint64_t histogram_count(std::string_view name) {
    std::uint64_t count = 0;
    for (const auto& sample : proxy_.system().scrape_metrics()) {
      if (sample.name == name) count += sample.histogram.count;
    }
    return count;
  }

  [[nodiscard]] World& world() { return *world_; }
  [[nodiscard]] FlakyStorage::Control& control() { return *control_; }
  [[nodiscard]] ScriptedHealthCheck& health() { return *health_; }
  [[nodiscard]] testing::Proxy& proxy() { return proxy_; }
  [[nodiscard]] std::string storage_path() const { return dir_->file("shards.state"); }
  [[nodiscard]] std::uint64_t endpoint(std::uint32_t key) { return endpoints_.at(key); }

 private:
  testing::Proxy start(std::string config) {
    actors::shard_manager::Options options;
    auto world = world_;
    auto control = control_;
    const std::string path = storage_path();
    const auto redis_port = redis_port_;
    options.storage = [world, control, path, redis_port](const actors::shard_manager::Config&)
        -> Result<std::unique_ptr<actors::shard_manager::AssignmentStorage>, std::string> {
      std::unique_ptr<actors::shard_manager::AssignmentStorage> inner;
      if (redis_port) {
        actors::shard_manager::RedisOptions redis;
        redis.port = *redis_port;
        inner = std::make_unique<actors::shard_manager::RedisStorage>(redis);
      } else {
        inner = std::make_unique<actors::shard_manager::FileStorage>(path);
      }
      return std::unique_ptr<actors::shard_manager::AssignmentStorage>(
          std::make_unique<FlakyStorage>(std::move(inner), control, world));
    };
    options.health_check = health_;
    Topology topology;
    auto manager = topology.local("sharding.manager");
    auto pods = topology.local("pods");
    manager.mount(actors::shard_manager::blueprint(std::move(options)));
    pods.mount(fake_pods(world_));
    // Telemetry on, so the tests can read the manager's metrics.
    topology.local("system.telemeters").mount(ActorGroup().exec([](Context<> ctx) -> Task<> {
      while (co_await ctx.recv()) {
      }
    }));
    StartOptions start;
    start.config_toml = fmt::format("[sharding.manager]\n{}\n", config);
    testing::ProxyOptions proxy_options;
    proxy_options.virtual_time = true;
    return testing::proxy(std::move(topology), "sharding.manager", std::move(start), proxy_options);
  }

  std::optional<std::uint16_t> redis_port_;
  std::shared_ptr<TempDir> dir_;
  std::shared_ptr<World> world_;
  std::shared_ptr<FlakyStorage::Control> control_;
  std::shared_ptr<ScriptedHealthCheck> health_;
  testing::Proxy proxy_;
  std::map<std::uint32_t, std::uint64_t> endpoints_;
};

}  // namespace elfin::test
