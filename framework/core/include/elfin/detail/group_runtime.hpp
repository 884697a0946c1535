// GroupRuntime: one mounted actor group inside a running system — its inner router, its actors
// (spawned on demand), its config, its termination, and its supervision: restarts with backoff
// and status subscriptions (held in a StatusSubscriptions). The typed part lives in Supervisor<C, K>.
//
// Restarts: when an actor's exec ends and the policy in force restarts it, its cell stays in the
// group (so routing finds it and spawns no other actor for the key) with its mailbox open, so
// messages sent while it waits are kept and handled by the restarted actor. A timer relaunches
// the cell; termination (`stop_spawning`) abandons every cell still waiting.
//
// Thread safety: `resolve` runs on the sending side, from any thread; the rest is documented
// per function.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_logging.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/status_subscriptions.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/envelope.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>
#include <elfin/termination_policy.hpp>

namespace elfin::detail {

class ActorCell;
class SystemCore;

/// What every group is born with; filled by the system at start.
struct GroupInit {
  SystemCore* system = nullptr;
  std::string name;
  std::uint8_t group_no = 0;
  Addr addr;
  bool entrypoint = false;  ///< gets its start-up UpdateConfig from the system itself
};

/// What a blueprint says about its group, independent of config and key types.
struct GroupTraits {
  TerminationPolicy termination = TerminationPolicy::closing();
  RestartPolicy restart = RestartPolicy::never();  ///< the blueprint's default
  std::size_t mailbox_capacity = 0;                ///< 0: the system default (100)
  bool external = false;                           ///< actors are test proxies, not coroutines
  bool stops_with_system = false;                  ///< terminated in the system phase (see ActorGroup)
};

class GroupRuntime {
 public:
  GroupRuntime(GroupInit init, GroupTraits traits);
  GroupRuntime(const GroupRuntime&) = delete;
  GroupRuntime& operator=(const GroupRuntime&) = delete;
  virtual ~GroupRuntime();

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] Addr addr() const { return addr_; }
  [[nodiscard]] std::uint8_t group_no() const { return group_no_; }
  [[nodiscard]] SystemCore& system() const { return *system_; }
  [[nodiscard]] const GroupTraits& traits() const { return traits_; }
  [[nodiscard]] bool is_system_group() const { return name_.starts_with("system."); }
  /// `system.*` groups, and groups built with `stop_with_system_groups()`, stop after user groups.
  [[nodiscard]] bool stops_in_system_phase() const { return is_system_group() || traits_.stops_with_system; }
  [[nodiscard]] bool is_entrypoint() const { return entrypoint_; }

  /// Inner-group routing: appends the actors that should get `envelope`, spawning as the router's
  /// Outcome says. Any thread.
  virtual void resolve(const Envelope& envelope, Targets& out) = 0;
  /// Decodes and stores a new config; actors pick it up on their next `recv` of UpdateConfig.
  [[nodiscard]] virtual Result<void, ConfigError> apply_config(const AnyConfig& config) = 0;
  /// Checks a config without applying it: values that do not fit the group's config type or the
  /// `system` table are errors, unknown keys warnings. Any thread.
  [[nodiscard]] virtual ConfigReport check_config(const AnyConfig& config) const = 0;
  /// The section last applied (a reload compares the new one with it). Any thread.
  [[nodiscard]] AnyConfig applied_config() const;
  [[nodiscard]] virtual std::shared_ptr<const void> current_config() const = 0;
  /// Stop spawning: from now on routing only reaches running actors, and actors waiting for a
  /// restart are abandoned (their queued requests fail).
  virtual void stop_spawning() = 0;
  [[nodiscard]] virtual std::size_t active_actors() const = 0;
  /// Called on the worker once an actor's exec has finished and its mailbox is closed.
  virtual void on_finished(ActorCell& cell) = 0;

  // --- supervision ------------------------------------------------------------------------------
  /// The restart policy in force for `cell`: its own override, else the config's, else the
  /// blueprint's. Only from the cell's worker.
  [[nodiscard]] RestartPolicy restart_policy_for(const ActorCell& cell) const;
  /// The config's restart policy (nullopt: none set). Any thread.
  [[nodiscard]] std::optional<RestartPolicy> configured_restart_policy() const;
  /// The wait before restarting `cell`, whose exec just ended with `final_status`; nullopt if it
  /// is not restarted. Advances the cell's backoff. Only from the cell's worker.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> restart_delay(ActorCell& cell, const ActorStatus& final_status);
  /// Starts `cell` again after `delay` (at once if zero). False if the group no longer restarts
  /// actors (it is terminating); the caller then finishes the cell for good.
  [[nodiscard]] bool schedule_restart(const std::shared_ptr<ActorCell>& cell, std::chrono::nanoseconds delay);
  /// Actors waiting for a restart.
  [[nodiscard]] std::size_t restarting_actors() const;
  /// Restarts so far (each relaunch of an actor counts once). Any thread.
  [[nodiscard]] std::uint64_t restarts() const { return restarts_.load(std::memory_order_relaxed); }

  /// Registers `subscriber` for ActorStatusReport: the current status of every actor now, then
  /// every change. Any thread.
  void subscribe_statuses(Addr subscriber);
  /// Tells the subscribers about a status change of `cell`. Any thread (the cell's owner).
  void publish_status(const ActorCell& cell, const ActorStatus& status);

  /// Mailbox capacity for new actors: config `system.mailbox.capacity`, else the blueprint's,
  /// else 100.
  [[nodiscard]] std::size_t mailbox_capacity() const { return mailbox_capacity_.load(std::memory_order_relaxed); }

  /// This group's dumping switch, rate limit and sequence numbers (`system.dumping`).
  [[nodiscard]] GroupDumping& dumping() { return dumping_; }
  /// This group's log level and rate limits (`system.logging`).
  [[nodiscard]] GroupLogging& logging() { return logging_; }
  /// This group's metrics switch and labels (`system.telemetry`).
  [[nodiscard]] GroupTelemetry& telemetry() { return telemetry_; }
  [[nodiscard]] const GroupTelemetry& telemetry() const { return telemetry_; }

  /// Inter-group routes out of this group, fixed before the system starts.
  struct Route {
    std::function<bool(const Envelope&)> filter;
    GroupRuntime* to;
  };
  void add_route(Route route) { routes_.push_back(std::move(route)); }
  [[nodiscard]] const std::vector<Route>& routes() const { return routes_; }

 protected:
  /// Outcome::Default: ValidateConfig → Discard, other system messages → Broadcast, user → Discard.
  [[nodiscard]] static bool default_is_broadcast(const Envelope& envelope);
  void set_applied_config(AnyConfig config);
  /// Adds what `decode_system_config` refuses (e.g. a restart policy without `when`) to `report`,
  /// with the file and line of the key.
  void check_runtime_keys(const AnyConfig& config, ConfigReport& report) const;
  /// "[name]": how reports name this group.
  [[nodiscard]] std::string scope() const { return "[" + name_ + "]"; }
  /// The `system.*` keys of a group's config section the runtime reads itself.
  struct SystemConfig {
    std::optional<std::size_t> mailbox_capacity;
    std::optional<RestartPolicy> restart_policy;
    DumpingConfig dumping;
    TelemetryConfig telemetry;
    LogLevel log_level = LogLevel::Info;
    std::uint64_t log_rate_per_level = LoggingConfig{}.max_rate_per_level;
  };
  [[nodiscard]] static Result<SystemConfig, ConfigError> decode_system_config(const AnyConfig& config);
  void apply_system_config(const SystemConfig& config);
  /// Abandons the actors waiting for a restart (termination). Any thread.
  void abandon_restarts();
  /// A new coroutine for `cell` (the typed part: exec with a fresh Context).
  [[nodiscard]] virtual Task<> make_task(ActorCell& cell) = 0;
  /// Calls `f` for every actor of the group. Any thread; `f` must not touch the group's map.
  virtual void for_each_actor(const std::function<void(ActorCell&)>& f) = 0;

 private:
  SystemCore* system_;
  std::string name_;
  std::uint8_t group_no_;
  Addr addr_;
  bool entrypoint_;
  GroupTraits traits_;
  std::atomic<std::size_t> mailbox_capacity_;
  GroupDumping dumping_;
  GroupLogging logging_;
  GroupTelemetry telemetry_;
  std::vector<Route> routes_;
  mutable std::mutex applied_mu_;
  AnyConfig applied_;  // guarded by applied_mu_

  mutable std::mutex config_mu_;
  std::optional<RestartPolicy> config_restart_;  // guarded by config_mu_

  struct Waiting {
    std::shared_ptr<ActorCell> cell;
    std::uint64_t timer = 0;
  };
  void relaunch(ActorCell& cell);
  mutable std::mutex restart_mu_;
  bool restarts_allowed_ = true;                     // guarded by restart_mu_
  std::unordered_map<ActorCell*, Waiting> waiting_;  // guarded by restart_mu_
  std::atomic<std::uint64_t> restarts_{0};           // a statistic: relaxed

  StatusSubscriptions status_subscriptions_;
};

// The non-template parts of spawning and finishing, implemented by the system.
/// Gives `cell` an address and a place in the address book.
void register_actor(SystemCore& system, const std::shared_ptr<ActorCell>& cell, std::uint8_t group_no);
/// Schedules a new actor's first run.
void start_actor(ActorCell& cell);
/// Starts system termination (what `ctx.terminate_system` does).
void terminate_system(SystemCore& system, std::string reason);
/// Tells the system an actor left its group (wakes termination waiters, frees its address).
void unregister_actor(SystemCore& system, ActorCell& cell);
/// Finishes a cell that will never run again: closes and drains its mailbox (queued requests
/// fail), then unregisters it.
void forget_actor(ActorCell& cell);

}  // namespace elfin::detail
