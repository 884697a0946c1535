// GroupRestarts: a group's restarts (elfo's supervision with backoff) — which policy applies to an
// actor, how long it waits, the actors waiting for their relaunch, and how many restarts there
// were.
//
// When an actor's exec ends and the policy in force restarts it, its cell stays in the group (so
// routing finds it and spawns no other actor for the key) with its mailbox open, so messages sent
// while it waits are kept and handled by the restarted actor. A timer relaunches the cell;
// termination (`abandon`) abandons every cell still waiting.
//
// Thread safety: documented per function.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <elfin/actor_status.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/task.hpp>

namespace elfin::detail {

class ActorCell;
class SystemCore;

class GroupRestarts {
 public:
  /// A new coroutine for a cell being relaunched (the group's typed part).
  using MakeTask = std::function<Task<>(ActorCell&)>;

  /// `blueprint` is the group's default policy; an `external` group (test proxies) never restarts.
  GroupRestarts(SystemCore& system, RestartPolicy blueprint, bool external, MakeTask make_task);
  GroupRestarts(const GroupRestarts&) = delete;
  GroupRestarts& operator=(const GroupRestarts&) = delete;
  ~GroupRestarts();

  /// The config's `system.restart_policy` (nullopt: none set, the blueprint's applies). Any thread.
  void configure(std::optional<RestartPolicy> policy);
  /// The config's restart policy (nullopt: none set). Any thread.
  [[nodiscard]] std::optional<RestartPolicy> configured() const;
  /// The restart policy in force for `cell`: its own override, else the config's, else the
  /// blueprint's. Only from the cell's worker.
  [[nodiscard]] RestartPolicy policy_for(const ActorCell& cell) const;
  /// The wait before restarting `cell`, whose exec just ended with `final_status`; nullopt if it
  /// is not restarted. Advances the cell's backoff. Only from the cell's worker.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> delay(ActorCell& cell, const ActorStatus& final_status);
  /// Starts `cell` again after `delay` (at once if zero). False if the group no longer restarts
  /// actors (it is terminating); the caller then finishes the cell for good.
  [[nodiscard]] bool schedule(const std::shared_ptr<ActorCell>& cell, std::chrono::nanoseconds delay);
  /// Stops restarting: every cell still waiting is forgotten (its queued requests fail). Any thread.
  void abandon();

  /// Actors waiting for a restart. Any thread.
  [[nodiscard]] std::size_t waiting() const;
  /// Restarts so far (each relaunch of an actor counts once). Any thread.
  [[nodiscard]] std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  struct Waiting {
    std::shared_ptr<ActorCell> cell;
    std::uint64_t timer = 0;
  };
  void relaunch(ActorCell& cell);

  SystemCore& system_;
  const RestartPolicy blueprint_;
  const bool external_;
  MakeTask make_task_;

  mutable std::mutex config_mu_;
  std::optional<RestartPolicy> configured_;  // guarded by config_mu_

  mutable std::mutex mu_;
  bool allowed_ = true;                              // guarded by mu_
  std::unordered_map<ActorCell*, Waiting> waiting_;  // guarded by mu_
  std::atomic<std::uint64_t> count_{0};              // a statistic: relaxed
};

}  // namespace elfin::detail
