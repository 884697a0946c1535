// `elfin kv ...`: the local cluster's start and stop, and the client commands (put, get, delete,
// cas, scan) joining a cluster as a light node. `elfin kv --help` prints the usage.
//
// Thread safety: one call at a time (it may start a light node and child processes).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/result.hpp>

namespace elfin::cli {

/// Runs `elfin kv <args>`; the exit code: 0 done, 1 failed (the error on `err`), 2 bad usage,
/// 3 the key (or the key at that version) was not found.
[[nodiscard]] int run_kv_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err);

/// The value of `--pods`: comma-separated "tcp://HOST:PORT" addresses, pod 1 first (kv and kv bench).
[[nodiscard]] Result<std::vector<std::string>, std::string> parse_pods(std::string_view list);

}  // namespace elfin::cli
