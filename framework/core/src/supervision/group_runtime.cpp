#include <elfin/detail/group_runtime.hpp>

#include <fmt/format.h>

#include <algorithm>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/duration.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/messages.hpp>

#include "observers/runtime_log.hpp"
#include "supervision/restart_policy_config.hpp"
#include "system/system_core.hpp"

namespace elfin::detail {

GroupRuntime::GroupRuntime(GroupInit init, GroupTraits traits)
    : system_(init.system),
      name_(std::move(init.name)),
      group_no_(init.group_no),
      addr_(init.addr),
      entrypoint_(init.entrypoint),
      traits_(traits),
      mailbox_capacity_(traits_.mailbox_capacity != 0 ? traits_.mailbox_capacity : Mailbox::kDefaultCapacity) {}

GroupRuntime::~GroupRuntime() = default;

bool GroupRuntime::default_is_broadcast(const Envelope& envelope) {
  return envelope.vtable().is_system && !envelope.is<ValidateConfig>();
}

Result<GroupRuntime::SystemConfig, ConfigError> GroupRuntime::decode_system_config(const AnyConfig& config) {
  SystemConfig out;
  out.mailbox_capacity = config.mailbox_capacity();
  auto restart = decode_restart_policy(config);
  if (!restart) return Err{std::move(restart).error()};
  out.restart_policy = *restart;
  auto dumping = config.section("system.dumping").decode<DumpingConfig>();
  if (!dumping) return Err{dumping.error().nested("system.dumping", "system.dumping: " + dumping.error().message())};
  out.dumping = *dumping;
  auto telemetry = config.section("system.telemetry").decode<TelemetryConfig>();
  if (!telemetry) {
    return Err{telemetry.error().nested("system.telemetry", "system.telemetry: " + telemetry.error().message())};
  }
  out.telemetry = *telemetry;
  auto logging = config.section("system.logging").decode<LoggingConfig>();
  if (!logging) return Err{logging.error().nested("system.logging", "system.logging: " + logging.error().message())};
  auto level = parse_log_level(logging->max_level);
  if (!level) {
    return Err{
        level.error().nested("system.logging.max_level", "system.logging.max_level: " + level.error().message())};
  }
  out.log_level = *level;
  out.log_rate_per_level = logging->max_rate_per_level;
  return out;
}

void GroupRuntime::apply_system_config(const SystemConfig& config) {
  if (config.mailbox_capacity) mailbox_capacity_.store(*config.mailbox_capacity, std::memory_order_relaxed);
  dumping_.configure(config.dumping);
  telemetry_.configure(config.telemetry);
  logging_.configure(config.log_level, config.log_rate_per_level);
  // A config without the table drops an earlier config's policy: the blueprint's applies again.
  std::lock_guard lock(config_mu_);
  config_restart_ = config.restart_policy;
}

// --- restarts -----------------------------------------------------------------------------------

std::optional<RestartPolicy> GroupRuntime::configured_restart_policy() const {
  std::lock_guard lock(config_mu_);
  return config_restart_;
}

RestartPolicy GroupRuntime::restart_policy_for(const ActorCell& cell) const {
  if (cell.restart_override()) return *cell.restart_override();
  if (auto configured = configured_restart_policy()) return *configured;
  return traits_.restart;
}

std::optional<std::chrono::nanoseconds> GroupRuntime::restart_delay(ActorCell& cell, const ActorStatus& final_status) {
  if (traits_.external) return std::nullopt;
  const RestartPolicy policy = restart_policy_for(cell);
  if (!policy.restarts(final_status.kind() == ActorStatusKind::Failed) || !policy.params()) return std::nullopt;
  const auto lived = system_->timers().now() - cell.started_at();
  auto delay = cell.backoff().next(*policy.params(), lived);
  if (!delay) {
    log_runtime(*system_, LogLevel::Warn, cell, "not restarting: {} quick restarts in a row (max_retries)",
                cell.backoff().attempt());
  }
  return delay;
}

bool GroupRuntime::schedule_restart(const std::shared_ptr<ActorCell>& cell, std::chrono::nanoseconds delay) {
  {
    std::lock_guard lock(restart_mu_);
    if (!restarts_allowed_) return false;
    if (delay > std::chrono::nanoseconds::zero()) {
      log_runtime(*system_, LogLevel::Info, *cell, "restarting in {} (attempt {})", format_duration(delay),
                  cell->backoff().attempt());
      // The timer finds the cell in waiting_ unless termination abandoned it first; whoever takes
      // it out of the map owns what happens next, so a cancel that comes too late is harmless.
      auto& waiting = waiting_[cell.get()];
      waiting.cell = cell;
      waiting.timer = system_->timers().schedule_after(delay, [this, raw = cell.get()] {
        std::shared_ptr<ActorCell> due;
        {
          std::lock_guard inner(restart_mu_);
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

std::size_t GroupRuntime::restarting_actors() const {
  std::lock_guard lock(restart_mu_);
  return waiting_.size();
}

void GroupRuntime::relaunch(ActorCell& cell) {
  // The cell is Dead (no one runs or schedules it) until start_actor makes it Idle, so its
  // per-lifecycle state is ours to reset.
  restarts_.fetch_add(1, std::memory_order_relaxed);
  cell.begin_lifecycle(ActorStartInfo{ActorStartCause::Restarted, cell.backoff().attempt()});
  cell.task_ = make_task(cell);
  start_actor(cell);
}

void GroupRuntime::abandon_restarts() {
  std::unordered_map<ActorCell*, Waiting> abandoned;
  {
    std::lock_guard lock(restart_mu_);
    restarts_allowed_ = false;
    abandoned.swap(waiting_);
  }
  for (auto& [raw, waiting] : abandoned) {
    std::ignore = system_->timers().cancel(waiting.timer);
    forget_actor(*waiting.cell);
  }
}

// --- status subscriptions (status_subscriptions.cpp) --------------------------------------------

void GroupRuntime::subscribe_statuses(Addr subscriber) {
  status_subscriptions_.subscribe(*system_, addr_, subscriber,
                                  [this](const std::function<void(ActorCell&)>& f) { for_each_actor(f); });
}

void GroupRuntime::publish_status(const ActorCell& cell, const ActorStatus& status) {
  status_subscriptions_.publish(*system_, addr_, cell, status);
}

void GroupRuntime::check_runtime_keys(const AnyConfig& config, ConfigReport& report) const {
  auto decoded = decode_system_config(config);
  if (decoded) return;
  const ConfigError& error = decoded.error();
  report.errors.push_back(fmt::format("{}{} {}", config.where(error.key_path()), scope(), error.message()));
}

AnyConfig GroupRuntime::applied_config() const {
  std::lock_guard lock(applied_mu_);
  return applied_;
}

void GroupRuntime::set_applied_config(AnyConfig config) {
  std::lock_guard lock(applied_mu_);
  applied_ = std::move(config);
}

}  // namespace elfin::detail
