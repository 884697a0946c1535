// GroupRuntime: one mounted actor group inside a running system — its identity, its traits and
// inter-group routes, composed with one object per concept: the group's config (GroupConfig,
// config/), its restarts (GroupRestarts, supervision/), its status subscriptions
// (StatusSubscriptions, supervision/) and its observers (GroupDumping, GroupLogging,
// GroupTelemetry). Inner routing and the actors by key are the typed part, Supervisor<C, K>.
//
// What only the runtime's sources touch is declared in src/; this header keeps what the typed part
// and the send path need inline.
//
// Thread safety: `resolve` runs on the sending side, from any thread; the rest is documented
// per function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_logging.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/envelope.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>
#include <elfin/termination_policy.hpp>

namespace elfin::detail {

class ActorCell;
class DirectSink;
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

class GroupConfig;
class GroupRestarts;
class StatusSubscriptions;

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
  [[nodiscard]] virtual std::shared_ptr<const void> current_config() const = 0;
  /// Stop spawning: from now on routing only reaches running actors, and actors waiting for a
  /// restart are abandoned (their queued requests fail).
  virtual void stop_spawning() = 0;
  [[nodiscard]] virtual std::size_t active_actors() const = 0;
  /// Takes an actor that stops for good out of the group's map: when it starts closing (so that
  /// routing starts a successor for its key from then on) and again when it is unregistered. Once
  /// per actor is enough; the second call finds it gone. Any thread.
  virtual void on_finished(ActorCell& cell) = 0;
  /// The actor routing now gives `envelope` to in place of `ended`, whose mailbox refused it
  /// because it stopped for good after routing chose it: the new incarnation of its key, started
  /// if the router's Outcome spawns, or null (another group kind, an Outcome without that key, a
  /// gentle one and no new incarnation, spawning stopped, or `ended` itself still in the map
  /// because it closed its own mailbox). Any thread.
  [[nodiscard]] virtual std::shared_ptr<ActorCell> successor(ActorCell& ended, const Envelope& envelope) {
    std::ignore = ended;
    std::ignore = envelope;
    return nullptr;
  }
  /// A new coroutine for `cell` (the typed part: exec with a fresh Context); a restart runs it.
  [[nodiscard]] virtual Task<> make_task(ActorCell& cell) = 0;
  /// Calls `f` for every actor of the group. Any thread; `f` must not touch the group's map.
  virtual void for_each_actor(const std::function<void(ActorCell&)>& f) = 0;

  /// The `system.*` keys, the mailbox capacity and the section last applied (config/group_config.hpp).
  [[nodiscard]] GroupConfig& group_config() { return *group_config_; }
  [[nodiscard]] const GroupConfig& group_config() const { return *group_config_; }
  /// Restart policy, backoff delays and the actors waiting for their restart
  /// (supervision/group_restarts.hpp).
  [[nodiscard]] GroupRestarts& restarts() { return *restarts_; }
  [[nodiscard]] const GroupRestarts& restarts() const { return *restarts_; }
  /// Who is told about the statuses of this group's actors (supervision/status_subscriptions.hpp).
  [[nodiscard]] StatusSubscriptions& status_subscriptions() { return *status_subscriptions_; }

  // What the typed part and tests reach without the runtime's own headers; each forwards to one
  // of the objects above.
  /// The section last applied (a reload compares the new one with it). Any thread.
  [[nodiscard]] AnyConfig applied_config() const;
  /// Mailbox capacity for new actors: config `system.mailbox.capacity`, else the blueprint's,
  /// else 100. Any thread.
  [[nodiscard]] std::size_t mailbox_capacity() const;
  /// Actors waiting for a restart. Any thread.
  [[nodiscard]] std::size_t restarting_actors() const;

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

  /// Where a Caller's messages to this group's actors go instead of their mailboxes (see
  /// DirectSink in elfin/internal/system_hooks.hpp); null for almost every group. Set while the
  /// group is made, read-only afterwards.
  [[nodiscard]] DirectSink* direct_sink() const { return direct_sink_.get(); }
  void set_direct_sink(std::shared_ptr<DirectSink> sink) { direct_sink_ = std::move(sink); }

 protected:
  /// Outcome::Default: ValidateConfig → Discard, other system messages → Broadcast, user → Discard.
  [[nodiscard]] static bool default_is_broadcast(const Envelope& envelope);
  /// The typed part's share of a config change, run by `apply_runtime_config` once the `system.*`
  /// keys decoded too.
  using Commit = std::function<void()>;
  /// Decodes the `system.*` keys of `config`; if they are valid, runs `commit` (the typed
  /// config, already decoded by the caller), applies the keys and remembers `config` as applied.
  [[nodiscard]] Result<void, ConfigError> apply_runtime_config(const AnyConfig& config, const Commit& commit);
  /// Adds the `system` table's findings to `report` (after the typed part checked its own keys).
  void check_runtime_config(const AnyConfig& config, ConfigReport& report) const;
  /// "[name]": how reports name this group.
  [[nodiscard]] std::string scope() const { return "[" + name_ + "]"; }
  /// Answers SubscribeToActorStatuses from `subscriber`. Any thread.
  void subscribe_statuses(Addr subscriber);
  /// Abandons the actors waiting for a restart (termination). Any thread.
  void abandon_restarts();

 private:
  SystemCore* system_;
  std::string name_;
  std::uint8_t group_no_;
  Addr addr_;
  bool entrypoint_;
  GroupTraits traits_;
  GroupDumping dumping_;
  GroupLogging logging_;
  GroupTelemetry telemetry_;
  std::vector<Route> routes_;
  std::shared_ptr<DirectSink> direct_sink_;
  std::unique_ptr<GroupRestarts> restarts_;
  std::unique_ptr<GroupConfig> group_config_;
  std::unique_ptr<StatusSubscriptions> status_subscriptions_;
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
/// Asks the actor at `actor` (of this node, not external) to be ended at its next suspension
/// (Context::kill). False if there is no such actor or it was asked already. Any thread.
bool kill_actor(SystemCore& system, Addr actor, std::string reason);
/// Finishes a cell that will never run again: closes and drains its mailbox (queued requests
/// fail), then unregisters it.
void forget_actor(ActorCell& cell);

}  // namespace elfin::detail
