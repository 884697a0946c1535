// System: a running node — its groups, worker threads and address book — from `start` until
// every actor has finished.
//
//   auto system = System::start(std::move(topology), {.config_toml = "[counters]\\nstep = 2"});
//   if (!system) { fmt::print(stderr, "{}\\n", system.error()); return 1; }
//   ...
//   system->terminate();   // polite Terminate to user groups, then system groups
//   system->join();
//
// `run(topology, options)` does the same for a `main`: start, stop on SIGTERM/SIGINT, wait.
//
// Start-up: duplicate message names, unmounted groups, bad routes and configs that do not decode
// are reported before any actor runs, and nothing is started. `check` does the same checks and
// stops there (what `elfin check` runs).
//
// Config distribution: every group's section is applied before any actor runs. Without a
// `system.configurers` group, the start-up UpdateConfig then goes to every group (entrypoints
// first); with one, only to the entrypoints, and the configurer validates and distributes the rest
// (see framework/configurer).
//
// Thread safety: the System object is used from the thread that started it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/result.hpp>
#include <elfin/start_error.hpp>
#include <elfin/telemetry.hpp>
#include <elfin/time_error.hpp>
#include <elfin/topology.hpp>

namespace elfin {

namespace detail {
class GroupRuntime;
class SystemCore;
}  // namespace detail
namespace dumping {
class DumpStorage;
}

struct StartOptions {
  std::uint16_t node_no = 0;
  /// Worker threads; 0 means the config's `[system.runtime] workers`, else one per core.
  unsigned workers = 0;
  /// Most threads running `ctx.blocking` work at once (started when first needed); 0 means the
  /// config's `[system.runtime] blocking_threads`, else 4.
  unsigned blocking_threads = 0;
  /// The config document (TOML): one table per group, e.g. `[counters] step = 2`.
  std::string config_toml;
  /// An already parsed config document; used instead of `config_toml` when set.
  std::optional<AnyConfig> config;
  /// A config file (TOML), read at start when neither `config` nor `config_toml` is given; the
  /// configurer re-reads it on reload.
  std::string config_path;
  /// Where `config_toml` came from, for error messages.
  std::string config_source = "<config>";
  /// Called on every actor status change, on the thread that made it. Keep it short.
  std::function<void(const ActorMeta&, Addr, const ActorStatus&)> on_status;
  /// Termination stage timeouts: after the polite Terminate, after Terminate::closing(). Unset:
  /// the config's `[system.runtime] terminate_closing_after` / `terminate_give_up_after`, else
  /// 30 s and 15 s. Measured on the system's clock (virtual under `virtual_time`).
  std::optional<std::chrono::milliseconds> terminate_closing_after;
  std::optional<std::chrono::milliseconds> terminate_give_up_after;
  /// The memory tracker (Linux): terminate gracefully once the process's RSS / MemTotal exceeds
  /// `memory_threshold`, checked every `memory_check_interval`. Unset: the config's
  /// `[system.runtime]` keys of the same names, else 0.9 and 3 s. A threshold of 1.0 is never
  /// exceeded. Off under `virtual_time`.
  std::optional<double> memory_threshold;
  std::optional<std::chrono::milliseconds> memory_check_interval;
  /// Virtual time: the runtime's clock stands still until `System::advance_time` moves it, so
  /// tests of backoff, intervals and delays run in milliseconds of wall time.
  bool virtual_time = false;
  /// Under virtual time: where the clock starts (the steady clock's now if unset). Systems given
  /// the same start share one time line, as the nodes of a simulated cluster do.
  std::optional<std::chrono::steady_clock::time_point> virtual_start;
};

class System {
 public:
  [[nodiscard]] static Result<System, StartError> start(Topology topology, StartOptions options = {});
  /// Every check `start` makes (messages, topology, configs), without starting anything.
  /// On success, the warnings (unknown keys, sections that match no group).
  [[nodiscard]] static Result<std::vector<std::string>, StartError> check(Topology topology, StartOptions options = {});

  System(System&&) noexcept;
  System& operator=(System&&) noexcept;
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  /// Terminates (if still running) and waits.
  ~System();

  /// Starts system termination (idempotent, returns at once).
  void terminate(std::string reason = "terminate() called");
  /// Waits until termination has finished.
  void join();
  /// Waits up to `timeout` for termination to finish.
  [[nodiscard]] bool join_for(std::chrono::milliseconds timeout);

  /// Virtual time only: moves the system's clock forward by `by`, firing due timers in order and,
  /// before the first and after each instant's timers, waiting until no actor is queued or running
  /// (up to `settle_timeout` of real time each, else an error). Chains of timers (an interval's
  /// ticks, restart backoffs) play out within this one call. An error in real time.
  [[nodiscard]] Result<void, TimeError> advance_time(
      std::chrono::nanoseconds by, std::chrono::milliseconds settle_timeout = std::chrono::milliseconds(5000));

  /// The system's clock: virtual under `virtual_time`, else the steady clock.
  [[nodiscard]] std::chrono::steady_clock::time_point now() const;
  /// The deadline of the earliest pending timer (intervals, delays, restart backoffs), if any:
  /// under virtual time, the next moment at which `advance_time` has something to fire.
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> next_timer() const;

  /// Stops the system at once, as a power cut stops a machine: no Terminate is sent, no actor runs
  /// again, pending timers are dropped; then the actors' mailboxes are emptied (a request waiting
  /// there fails) and their coroutine frames destroyed, so their destructors still run. The system
  /// counts as terminated afterwards. For crash tests (elfin::testing::SimCluster); idempotent.
  void kill(std::string reason = "killed");

  /// The address of a group, or the null address.
  [[nodiscard]] Addr group_addr(std::string_view name) const;
  [[nodiscard]] std::size_t active_actors() const;
  /// Why the system was terminated as failed (by a battery, e.g. a config rejected at start-up).
  [[nodiscard]] std::optional<std::string> failure() const;
  [[nodiscard]] detail::SystemCore& core() const { return *core_; }
  /// The running group named `name` (runtime internals; the test proxy uses it).
  [[nodiscard]] detail::GroupRuntime* core_group(std::string_view name) const;
  /// Where dumps wait for the dumper; null when the topology has no `system.dumpers`.
  [[nodiscard]] dumping::DumpStorage* dump_storage() const;
  /// Every metric the system records now; empty when the topology has no `system.telemeters`.
  [[nodiscard]] std::vector<telemetry::MetricSample> scrape_metrics() const;

 private:
  explicit System(std::unique_ptr<detail::SystemCore> core);
  std::unique_ptr<detail::SystemCore> core_;
};

/// Starts `topology`, terminates it on SIGTERM or SIGINT (a second signal exits at once), and
/// returns the process exit code: 0 after a clean termination, 1 if it could not start or was
/// terminated as failed.
[[nodiscard]] int run(Topology topology, StartOptions options = {});

}  // namespace elfin
