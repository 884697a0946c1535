// Runner: drives a workload with W worker threads, closed-loop (each worker sends its next
// operation when the last one answered) or open-loop at a fixed rate (pacer.hpp), for a duration
// or a number of operations, and collects latencies and errors per kind of operation. It knows
// nothing of the protocol: a workload gives each worker a function doing one operation, so
// `elfin kv bench` and the side-by-side benchmarks against Redis and etcd share one generator.
//
//   Workload workload;
//   workload.kinds = {"get", "put"};
//   workload.make_worker = [&](unsigned w) -> Operation {
//     return [client = connect(w)](std::uint64_t op) mutable { return client.put(...) ? Outcome{1} : Outcome{1,
//     "Timeout"}; };
//   };
//   RunResult result = run(workload, {.workers = 16, .duration = 10s, .on_progress = print});
//
// Every second (`progress_interval`) the runner hands `on_progress` the figures of the interval
// just ended, from the thread that called run(). A worker's operations are timed from the moment
// it starts them (closed loop) or from their intended start (fixed rate).
//
// Thread safety: run() blocks; the operations run on the workers' threads, one operation at a time
// per worker; on_progress runs on the caller's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <elfin/loadgen/report.hpp>

namespace elfin::loadgen {

/// What one operation did: its kind (an index into Workload::kinds) and, when it failed, why
/// (an error kind such as "Timeout"; empty: it succeeded).
struct Outcome {
  std::size_t kind = 0;
  std::string error{};
};

/// One worker's operation; `op` is the operation's number in the run (0, 1, ...; unique across
/// workers), which a workload may use to pick distinct keys.
using Operation = std::function<Outcome(std::uint64_t op)>;

struct Workload {
  std::vector<std::string> kinds;
  /// Called once per worker, on that worker's thread, before the clock starts (connect here).
  /// An empty Operation means the worker could not start; run() then reports `setup_error`.
  std::function<Operation(unsigned worker)> make_worker;
};

struct RunOptions {
  unsigned workers = 1;
  /// Stop after this long, or after `ops` operations (whichever is set; both: the first reached).
  std::optional<std::chrono::nanoseconds> duration{};
  std::optional<std::uint64_t> ops{};
  /// Fixed-rate mode: this many operations per second over all workers.
  std::optional<double> rate{};
  std::chrono::nanoseconds progress_interval = std::chrono::seconds(1);
  std::function<void(std::chrono::nanoseconds run_time, const RunSummary& interval)> on_progress{};
};

struct RunResult {
  RunSummary total;                  ///< every kind together
  std::vector<RunSummary> per_kind;  ///< indexed like Workload::kinds
  std::vector<std::string> kinds;
  std::optional<std::string> setup_error;  ///< a worker could not start; nothing was run
};

[[nodiscard]] RunResult run(const Workload& workload, const RunOptions& options);

/// The result as one JSON object: {"ops", "seconds", "ops_per_s", "target_rate", "latency_ns":
/// {"p50", "p99", "p999", "max", "mean"}, "errors": {kind: n}, "kinds": {name: {the same}}}.
[[nodiscard]] std::string to_json(const RunResult& result);

}  // namespace elfin::loadgen
