// The pod side's config (the section of the group mounting `sharding.pod`), with Shardcake's
// defaults:
//
//   [sharding.pod]
//   address = "10.0.0.7:9201"              # this pod's name in the cluster; empty: "node-<node_no>"
//   version = "1.0.0"                      # shards go only to the newest version present
//   shard_function = "jump-xxh64/1:1024"   # must be the manager's, or the register is refused
//   entity_max_idle_time = "1m"            # an entity that received nothing this long stops
//   entity_termination_timeout = "3s"      # how long stopping a shard's entities may take
//   send_timeout = "10s"                   # how long a sender retries towards a shard's owner
//   retry_interval = "1s"                  # register / fetch the map again after a failure
//   refresh_interval = "5s"                # fetch the map when a command was newer than it
//   unhealthy_report_interval = "5s"       # report an unreachable pod to the manager at most this often
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <elfin/config.hpp>

namespace elfin::actors::sharding {

struct PodConfig {
  std::string address;
  std::string version = "1.0.0";
  std::string shard_function = "jump-xxh64/1:1024";
  std::chrono::milliseconds entity_max_idle_time{60'000};
  std::chrono::milliseconds entity_termination_timeout{3'000};
  std::chrono::milliseconds send_timeout{10'000};
  std::chrono::milliseconds retry_interval{1'000};
  std::chrono::milliseconds refresh_interval{5'000};
  std::chrono::milliseconds unhealthy_report_interval{5'000};
  ELFIN_CONFIG(address, version, shard_function, entity_max_idle_time, entity_termination_timeout, send_timeout,
               retry_interval, refresh_interval, unhealthy_report_interval);
};

/// What the types alone do not check (a parsable shard function, positive durations, a version),
/// one line per problem, each starting with where the key was written when `section` knows it.
/// Empty: the config is fine.
[[nodiscard]] std::vector<std::string> validate(const PodConfig& config, const AnyConfig& section = {});

}  // namespace elfin::actors::sharding
