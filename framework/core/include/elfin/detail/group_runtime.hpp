// GroupRuntime: one mounted actor group inside a running system — its inner router, its actors
// (spawned on demand), its config and its termination. The typed part lives in Supervisor<C, K>.
//
// Thread safety: `resolve` runs on the sending side, from any thread; the rest is documented
// per function.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/envelope.hpp>
#include <elfin/result.hpp>
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
};

/// What a blueprint says about its group, independent of config and key types.
struct GroupTraits {
  TerminationPolicy termination = TerminationPolicy::closing();
  std::size_t mailbox_capacity = 0;  ///< 0: the system default (100)
  bool external = false;             ///< actors are test proxies, not coroutines
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
  /// `system.*` groups stop after user groups.
  [[nodiscard]] bool is_system_group() const { return name_.starts_with("system."); }

  /// Inner-group routing: appends the actors that should get `envelope`, spawning as the router's
  /// Outcome says. Any thread.
  virtual void resolve(const Envelope& envelope, Targets& out) = 0;
  /// Decodes and stores a new config; actors pick it up on their next `recv` of UpdateConfig.
  [[nodiscard]] virtual Result<void, std::string> apply_config(const AnyConfig& config) = 0;
  [[nodiscard]] virtual std::shared_ptr<const void> current_config() const = 0;
  /// Stop spawning: from now on routing only reaches running actors.
  virtual void stop_spawning() = 0;
  [[nodiscard]] virtual std::size_t active_actors() const = 0;
  /// Called on the worker once an actor's exec has finished and its mailbox is closed.
  virtual void on_finished(ActorCell& cell) = 0;

  /// Mailbox capacity for new actors: config `system.mailbox.capacity`, else the blueprint's,
  /// else 100.
  [[nodiscard]] std::size_t mailbox_capacity() const { return mailbox_capacity_.load(std::memory_order_relaxed); }

  /// This group's dumping switch, rate limit and sequence numbers (`system.dumping`).
  [[nodiscard]] GroupDumping& dumping() { return dumping_; }
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
  void set_mailbox_capacity_from(const AnyConfig& config);

 private:
  SystemCore* system_;
  std::string name_;
  std::uint8_t group_no_;
  Addr addr_;
  GroupTraits traits_;
  std::atomic<std::size_t> mailbox_capacity_;
  GroupDumping dumping_;
  GroupTelemetry telemetry_;
  std::vector<Route> routes_;
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

}  // namespace elfin::detail
