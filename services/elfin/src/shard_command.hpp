// `elfin shard KEY... [--shards N] [--function jump|shardcake|<name>/<version>:<shards>]`: prints
// the shard each key routes to, computed by libs/hashing exactly as pods compute it — for checking
// where an entity lives, or that another client (a JVM pod, an SDK) agrees.
//
// Thread safety: called once, from the main thread.
#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace elfin::cli {

/// The help text of `elfin shard`.
extern const char* const kShardUsage;

/// Runs `elfin shard` with the arguments after `shard`; returns the exit code: 0 when every key
/// has a shard, 1 when a key has none (not UTF-8 for shardcake), 2 on a bad command line.
[[nodiscard]] int shard_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err);

}  // namespace elfin::cli
