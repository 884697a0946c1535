// The harness shared by elfin's benchmark binaries (bench_messaging, bench_actors): command line,
// warm-up + repetitions + median, the channel through which a driver actor hands its measurement
// to main(), and the one-line-per-case output next to the CAF peer's figure (and, for the cases
// that have one, the SObjectizer peer's).
//
// How an elfin case is measured: every repetition starts a fresh System (like the CAF peer builds a
// fresh actor_system), and a *driver actor* inside it does any untimed setup, reads steady_clock,
// kicks the workload off, reads the clock again when the last answer is in, verifies the result
// and calls `report()`. main() waits for that report, then terminates and joins the system, so
// neither start-up nor shutdown is ever timed.
//
// Thread safety: `report`/`report_error` from any thread (the driver's worker); everything else
// from main's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/errors.hpp>
#include <elfin/system.hpp>
#include <elfin/topology.hpp>

namespace elfin_bench {

/// `ops` operations completed in `seconds` of wall time (same shape as the CAF peer's Figure).
struct Figure {
  double seconds = 0;
  std::uint64_t ops = 0;
};

struct Options {
  unsigned reps = 5;     ///< --reps N: measured repetitions (after one warm-up)
  bool quick = false;    ///< --quick: small sizes (smoke runs, profiling under callgrind)
  std::string only;      ///< --case NAME: run only this case (or case family, see Case::family)
  unsigned threads = 2;  ///< --threads N: worker threads of elfin, CAF's scheduler, SObjectizer's pool
  bool caf = true;       ///< --no-caf: skip the CAF peer (elfin-only runs, profiling)
  bool so = true;        ///< --no-so: skip the SObjectizer peer
  bool warmup = true;    ///< --no-warmup: skip the warm-up run (profiling)
  std::string variant;   ///< --variant NAME: an alternative elfin design, where a case has some
};

/// One line of output. `family` groups related lines (routed_vs_direct = routed_send +
/// direct_send); `--case` accepts a line's name or its family.
struct Case {
  std::string name;
  std::string family;
  std::function<bool(const Options&)> run;  ///< false: the case failed (wrong result, error)
};

/// Parses argv, runs the selected cases in order and returns main's exit code: 0 when every case
/// verified its result, 1 when one did not, 2 on a bad command line.
int run_main(std::string_view bench, std::vector<Case> cases, int argc, char** argv);

// --- measuring ---------------------------------------------------------------------------------

/// The median of several runs (by ops/s; the lower middle one for an even count), and the spread.
struct Stats {
  double ops_per_s = 0;
  double ns_per_op = 0;
  std::uint64_t ops = 0;
  double min_ops_per_s = 0;
  double max_ops_per_s = 0;
};
Stats summarize(std::vector<Figure> figures);

/// A second peer column, after the first peer's keys: `<name>_ops_per_s`, `<name>_ns_per_op`,
/// `<name>_ratio` (elfin's ops/s over this peer's) and `<name>_range`, or n/a without `stats`.
struct SecondPeer {
  std::string_view name;
  std::optional<Stats> stats;
};

/// Prints the case's line: elfin's median, the peer's (or n/a) and their ratio. `extra` is appended
/// verbatim (" key=value ..."). The peer is CAF unless `peer` names another (e.g. "off": elfin with
/// the measured feature turned off, run side by side).
void print_line(std::string_view bench, std::string_view name, const Stats& elfin, const std::optional<Stats>& caf,
                std::string_view extra = {}, std::string_view peer = "caf",
                const std::optional<SecondPeer>& second = std::nullopt);

/// The SObjectizer workload of a case. `run` is empty when the peer is not built: the case's
/// line then says `so_ops_per_s=n/a`. Cases without an SObjectizer workload pass no SoPeer and
/// their lines have no `so_*` key.
struct SoPeer {
  std::function<Figure()> run;
};

/// The common body of a case: one warm-up run of each side (unless --no-warmup), then opts.reps
/// runs of elfin, of the CAF peer (when `caf` is set and the peer is built) and of the SObjectizer
/// peer (likewise), alternating; prints the line of medians. Any exception (a wrong result)
/// becomes an `error=` line and `false`.
bool run_case(std::string_view bench, std::string_view name, const Options& opts, const std::function<Figure()>& elfin,
              const std::function<Figure()>& caf, std::string_view extra = {},
              const std::optional<SoPeer>& so = std::nullopt);
/// The same with an elfin peer: `baseline` is elfin with the measured feature off, and its figure
/// takes the peer's place in the line as `off_ops_per_s` (so `ratio` is the feature's cost).
bool run_overhead_case(std::string_view bench, std::string_view name, const Options& opts,
                       const std::function<Figure()>& with_feature, const std::function<Figure()>& baseline,
                       std::string_view extra = {});

/// Whether the CAF peer was compiled in.
bool caf_available();
/// Whether the SObjectizer peer was compiled in.
bool so_available();

// --- elfin side -------------------------------------------------------------------------------

/// Starts `topology` with `threads` workers and the given config, waits (up to a generous
/// deadline) for the driver's `report`, terminates and joins the system and returns the figure.
/// Throws std::runtime_error on `report_error` or if the system does not start; on a timeout it
/// prints what hung and exits the process (a wedged system cannot be torn down safely).
Figure run_elfin(std::string_view what, elfin::Topology topology, std::string config_toml, unsigned threads);

/// Called once by the driver actor with the measured figure (after verifying it).
void report(Figure figure);
/// Called by any actor that detects a wrong result or a failed send; the first call wins.
void report_error(std::string why);

/// "what: reason" for a failed send or request, for `report_error`.
template <class E>
std::string error_text(std::string_view what, E error) {
  return fmt::format("{}: {}", what, elfin::to_string(error));
}

/// steady_clock in seconds between two points, for the drivers.
inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// The body of a benchmark's second process (`--serve`): starts `topology` as `options` say and
/// runs it until its stdin closes (the parent's end of the pipe: the parent finished or died).
/// The exit code; a start error goes to stderr, prefixed with `program`.
int serve_until_stdin_closes(elfin::Topology topology, elfin::StartOptions options, std::string_view program);

/// 0 + 1 + ... + (n - 1).
constexpr std::uint64_t sum_below(std::uint64_t n) { return n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2); }

}  // namespace elfin_bench
