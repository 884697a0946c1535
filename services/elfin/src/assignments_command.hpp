// `elfin shard --assignments --manager tcp://HOST:PORT [...]`: joins the cluster as a short-lived
// node (the network battery, with the manager as a remote group), asks the shard manager for its
// live map (GetAssignments) and prints it: the epoch, every pod with its version and shards, and
// the shards nobody owns.
//
// Thread safety: called once, from the main thread.
#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace elfin::cli {

/// The help text of `elfin shard --assignments`.
extern const char* const kAssignmentsUsage;

/// Runs it with the arguments after `shard` (`--assignments` among them); returns the exit code:
/// 0 when the map was printed, 1 when the manager did not answer in time, 2 on a bad command line.
[[nodiscard]] int assignments_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err);

}  // namespace elfin::cli
