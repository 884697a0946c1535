// The KV front's config: which nodes hold the shards' replicas, and how long a request may take.
//
//   [kv]
//   manager = false             # true: this pod registers with the shard manager (route
//                               # "sharding.*" to it) and each shard lives only on the replicas
//                               # the manager's assignment names; the front sends a shard's
//                               # requests there (the owner first) and passes the assignment to
//                               # the partition group (route "raft.Placement"; [partitions]
//                               # placement = "assignment")
//   nodes = [1, 2, 3]           # required without a manager: the pods holding a replica of every
//                               # shard, the same list as [partitions] nodes
//   shards = 1024               # keys hash to jump(xxh64(key), shards); every front of a
//                               # cluster must agree, and it cannot change once data is written
//   request_timeout = "5s"      # a request's deadline, retries included; then Timeout (a write's
//                               # outcome unknown) or Unavailable (nothing was applied)
//   scan_timeout = "30s"        # the same for a Scan over every shard (the first one on a new
//                               # cluster creates all 1024 shards' Raft groups on every pod)
//   retry_interval = "50ms"     # wait before retrying when no leader is known or a replica
//                               # cannot serve (times the attempts so far, at most 8 times);
//                               # a NotLeader hint is followed at once
//   max_scan_limit = 10000      # a Scan asking for more is a BadRequest
//   register_retry = "1s"       # with a manager: wait before registering again after a failure,
//                               # and between reads of the manager's map (the front registers
//                               # again when the map no longer lists its pod)
//
// A reload applies to requests that arrive afterwards.
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/config.hpp>

namespace elfin::actors::kv {

struct Config {
  bool manager = false;
  std::vector<std::uint16_t> nodes;
  std::uint32_t shards = 1024;
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds scan_timeout{30000};
  std::chrono::milliseconds retry_interval{50};
  std::uint32_t max_scan_limit = 10000;
  std::chrono::milliseconds register_retry{1000};
  ELFIN_CONFIG(manager, nodes, shards, request_timeout, scan_timeout, retry_interval, max_scan_limit, register_retry);
};

/// What is wrong with `config`, one line per problem naming the key (and, when `section` knows
/// where the key was written, the file and line); empty when it is valid. The front answers
/// ValidateConfig with these, so a reload with a bad value is refused.
[[nodiscard]] std::vector<std::string> validate(const Config& config, const AnyConfig& section = {});

}  // namespace elfin::actors::kv
