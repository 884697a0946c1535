// The shard manager's config (its group's section), with Shardcake's defaults:
//
//   [sharding.manager]
//   shard_function = "jump-xxh64/1:1024"   # 1024 virtual shards (NoriKV); "shardcake/1:300" = Shardcake's
//   rebalance_interval = "20s"             # a regular round this often
//   rebalance_retry_interval = "10s"       # another round this long after a round that had failures
//   ping_timeout = "3s"                    # a pod that does not answer PingPod in time failed it
//   handoff_timeout = "10s"                # how long an UnassignShards / AssignShards answer may take
//   persist_retry_interval = "3s"          # a round whose map could not be persisted retries this often
//   health_check_interval = "1m"           # every pod is health-checked this often, reported or not
//   reconnect_grace = "0s"                 # after a start, a pod this node cannot reach is only
//                                          # suspect this long (pods that dial the manager reconnect)
//   rebalance_rate = 0.02                  # a pod gains at most ceil(shards x rate) shards per regular round
//   replication_factor = 1                 # pods holding a replica of each shard (the first is its owner);
//                                          # 1 is Shardcake's single owner; fewer while there are fewer pods
//   storage.kind = "file"                  # or "redis"
//   storage.path = "shard_manager.state"   # file: where the state lives (its directory must exist)
//   storage.redis = "127.0.0.1:6379"       # redis: host:port
//   storage.key = "elfin:sharding"         # redis: the hash holding the state
//   storage.timeout = "1s"                 # redis: connect and per-command timeout
//
// The shard function is the cluster's: pods registering with another one are refused, and a
// stored map made with another one stops the manager at start (changing it is a migration).
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/config.hpp>

namespace elfin::actors::shard_manager {

struct StorageConfig {
  std::string kind = "file";
  std::string path = "shard_manager.state";
  std::string redis = "127.0.0.1:6379";
  std::string key = "elfin:sharding";
  std::chrono::milliseconds timeout{1'000};
  ELFIN_CONFIG(kind, path, redis, key, timeout);
};

struct Config {
  std::string shard_function = "jump-xxh64/1:1024";
  std::chrono::milliseconds rebalance_interval{20'000};
  std::chrono::milliseconds rebalance_retry_interval{10'000};
  std::chrono::milliseconds ping_timeout{3'000};
  std::chrono::milliseconds handoff_timeout{10'000};
  std::chrono::milliseconds persist_retry_interval{3'000};
  /// A dead pod nobody sends to would otherwise keep its shards until a round involves it
  /// (Shardcake #139). Later Shardcake versions sweep every minute.
  std::chrono::milliseconds health_check_interval{60'000};
  /// A restarted manager has no connection to pods that dial it (the KV pods do) until they
  /// reconnect: for this long after its start, a pod it cannot reach is a suspect, not dead.
  std::chrono::milliseconds reconnect_grace{0};
  double rebalance_rate = 0.02;
  /// Above 1, every shard is kept on this many distinct pods (elfin::assignment::plan_replicas): a
  /// pod that dies or leaves has each of its replicas replaced on another pod.
  std::uint32_t replication_factor = 1;
  StorageConfig storage;
  ELFIN_CONFIG(shard_function, rebalance_interval, rebalance_retry_interval, ping_timeout, handoff_timeout,
               persist_retry_interval, health_check_interval, reconnect_grace, rebalance_rate, replication_factor,
               storage);
};

/// What the types alone do not check (a parsable shard function, positive intervals, a rate in
/// (0, 1], a known storage kind, a `host:port`), one line per problem, each starting with where
/// the key was written (`node.toml:12: `) when `section` knows it. Empty: the config is fine.
[[nodiscard]] std::vector<std::string> validate(const Config& config, const AnyConfig& section = {});

}  // namespace elfin::actors::shard_manager
