#include "supervision/group_restarts.hpp"

#include <tuple>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/duration.hpp>

#include "observers/runtime_log.hpp"
#include "system/system_core.hpp"

namespace elfin::detail {

GroupRestarts::GroupRestarts(SystemCore& system, RestartPolicy blueprint, bool external, MakeTask make_task)
    : system_(system), blueprint_(blueprint), external_(external), make_task_(std::move(make_task)) {}

GroupRestarts::~GroupRestarts() = default;

void GroupRestarts::configure(std::optional<RestartPolicy> policy) {
  std::lock_guard lock(config_mu_);
  configured_ = policy;
}

std::optional<RestartPolicy> GroupRestarts::configured() const {
  std::lock_guard lock(config_mu_);
  return configured_;
}

RestartPolicy GroupRestarts::policy_for(const ActorCell& cell) const {
  if (const auto& restart_override = cell.restart_override()) return *restart_override;
  if (auto configured_policy = configured()) return *configured_policy;
  return blueprint_;
}

std::optional<std::chrono::nanoseconds> GroupRestarts::delay(ActorCell& cell, const ActorStatus& final_status) {
  if (external_) return std::nullopt;
  const RestartPolicy policy = policy_for(cell);
  const auto& params = policy.params();
  if (!policy.restarts(final_status.kind() == ActorStatusKind::Failed) || !params) return std::nullopt;
  const auto lived = system_.timers().now() - cell.started_at();
  auto wait = cell.backoff().next(*params, lived);
  if (!wait) {
    log_runtime(system_, LogLevel::Warn, cell, "not restarting: {} quick restarts in a row (max_retries)",
                cell.backoff().attempt());
  }
  return wait;
}

bool GroupRestarts::schedule(const std::shared_ptr<ActorCell>& cell, std::chrono::nanoseconds delay) {
  {
    std::lock_guard lock(mu_);
    if (!allowed_) return false;
    if (delay > std::chrono::nanoseconds::zero()) {
      log_runtime(system_, LogLevel::Info, *cell, "restarting in {} (attempt {})", format_duration(delay),
                  cell->backoff().attempt());
      // The timer finds the cell in waiting_ unless termination abandoned it first; whoever takes
      // it out of the map owns what happens next, so a cancel that comes too late is harmless.
      auto& waiting = waiting_[cell.get()];
      waiting.cell = cell;
      waiting.timer = system_.timers().schedule_after(delay, [this, raw = cell.get()] {
        std::shared_ptr<ActorCell> due;
        {
          std::lock_guard inner(mu_);
          auto it = waiting_.find(raw);
          if (it == waiting_.end()) return;
          due = std::move(it->second.cell);
          waiting_.erase(it);
        }
        relaunch(*due);
      });
      return true;
    }
  }
  relaunch(*cell);
  return true;
}

std::size_t GroupRestarts::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

void GroupRestarts::relaunch(ActorCell& cell) {
  // The cell is Dead (no one runs or schedules it) until start_actor makes it Idle, so its
  // per-lifecycle state is ours to reset.
  count_.fetch_add(1, std::memory_order_relaxed);
  cell.begin_lifecycle(ActorStartInfo{ActorStartCause::Restarted, cell.backoff().attempt()});
  cell.task_ = make_task_(cell);
  start_actor(cell);
}

void GroupRestarts::abandon() {
  std::unordered_map<ActorCell*, Waiting> abandoned;
  {
    std::lock_guard lock(mu_);
    allowed_ = false;
    abandoned.swap(waiting_);
  }
  for (auto& [raw, waiting] : abandoned) {
    std::ignore = system_.timers().cancel(waiting.timer);
    forget_actor(*waiting.cell);
  }
}

}  // namespace elfin::detail
