// `elfin kv bench`: the KV service's load generator. C concurrent clients (one elfin::kv::Client,
// one light node, per worker thread) run a get/put/cas mix over K keys (uniform, Zipf or
// sequential), closed loop or at a fixed rate, print a progress line every second on stderr and
// a final report (ops/s, p50/p99/p99.9 per kind, errors by KvError kind), as JSON with --json.
// `elfin kv bench --help` prints the usage.
//
// Thread safety: one call at a time (it starts a light node per client).
#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace elfin::cli {

/// Runs `elfin kv bench <args>` (`args` without `kv bench`); the exit code: 0 the run completed
/// operations, 1 no client connected or no operation succeeded, 2 bad usage.
[[nodiscard]] int run_kv_bench_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err);

}  // namespace elfin::cli
