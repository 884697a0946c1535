#include "config/group_config.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_logging.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/dumping.hpp>
#include <elfin/logging.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/system_config.hpp>
#include <elfin/telemetry.hpp>

#include "supervision/group_restarts.hpp"
#include "supervision/restart_policy_config.hpp"

namespace elfin::detail {

namespace {

/// The `system.*` keys of a group's config section the runtime reads itself.
struct SystemKeys {
  std::optional<std::size_t> mailbox_capacity;
  std::optional<RestartPolicy> restart_policy;
  DumpingConfig dumping;
  TelemetryConfig telemetry;
  LogLevel log_level = LogLevel::Info;
  std::uint64_t log_rate_per_level = LoggingConfig{}.max_rate_per_level;
};

Result<SystemKeys, ConfigError> decode_system_keys(const AnyConfig& config) {
  SystemKeys out;
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

}  // namespace

GroupConfig::GroupConfig(Targets targets, std::size_t mailbox_capacity)
    : targets_(targets), mailbox_capacity_(mailbox_capacity) {}

Result<void, ConfigError> GroupConfig::apply(const AnyConfig& section, const std::function<void()>& commit) {
  auto keys = decode_system_keys(section);
  if (!keys) return Err{std::move(keys).error()};
  commit();
  if (const auto& capacity = keys->mailbox_capacity) mailbox_capacity_.store(*capacity, std::memory_order_relaxed);
  targets_.dumping.configure(keys->dumping);
  targets_.telemetry.configure(keys->telemetry);
  targets_.logging.configure(keys->log_level, keys->log_rate_per_level);
  // A config without the table drops an earlier config's policy: the blueprint's applies again.
  targets_.restarts.configure(keys->restart_policy);
  std::lock_guard lock(applied_mu_);
  applied_ = section;
  return {};
}

void GroupConfig::check(const AnyConfig& section, std::string_view scope, ConfigReport& report) const {
  report.append(check_system_config(section, scope));
  if (!report.ok()) return;
  auto decoded = decode_system_keys(section);
  if (decoded) return;
  const ConfigError& error = decoded.error();
  report.errors.push_back(fmt::format("{}{} {}", section.where(error.key_path()), scope, error.message()));
}

AnyConfig GroupConfig::applied() const {
  std::lock_guard lock(applied_mu_);
  return applied_;
}

}  // namespace elfin::detail
