// GroupConfig: what the runtime itself takes from a group's config section — the `system.*` keys
// (mailbox capacity, restart policy, dumping, telemetry, logging), decoded, checked and handed to
// the objects they configure — and the section last applied, which a reload compares with.
//
//   [workers.system]
//   mailbox.capacity = 1000
//   restart_policy = { when = "OnFailure", min_backoff = "1s", max_backoff = "30s" }
//   dumping = { disabled = false, max_rate = 100000 }
//   telemetry = { per_actor_key = false }
//   logging = { max_level = "Info", max_rate_per_level = 1000 }
//
// The group's own keys are the typed part's (Supervisor<C, K>); `apply` runs its commit between
// decoding and applying the system keys, so a section is taken whole or not at all.
//
// Thread safety: any thread; `apply` calls are serialised by the configurer.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include <elfin/config.hpp>
#include <elfin/config_error.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

class GroupDumping;
class GroupLogging;
class GroupRestarts;
class GroupTelemetry;

class GroupConfig {
 public:
  /// What the `system.*` keys configure, owned by the group.
  struct Targets {
    GroupDumping& dumping;
    GroupLogging& logging;
    GroupTelemetry& telemetry;
    GroupRestarts& restarts;
  };
  /// `mailbox_capacity` is the blueprint's (the system default if it sets none).
  GroupConfig(Targets targets, std::size_t mailbox_capacity);

  /// Decodes the system keys of `section`; if they are valid, runs `commit` (the typed part's
  /// config, decoded already), applies the keys and remembers `section` as applied.
  [[nodiscard]] Result<void, ConfigError> apply(const AnyConfig& section, const std::function<void()>& commit);
  /// Adds to `report` what the `system` table holds wrong: unknown or mistyped keys
  /// (`check_system_config`) and, if those are fine, values the runtime refuses (e.g. a restart
  /// policy without `when`), with the file and line of the key. `scope` names the group.
  void check(const AnyConfig& section, std::string_view scope, ConfigReport& report) const;

  /// The section last applied. Any thread.
  [[nodiscard]] AnyConfig applied() const;
  /// Mailbox capacity for new actors: `system.mailbox.capacity`, else the blueprint's.
  [[nodiscard]] std::size_t mailbox_capacity() const { return mailbox_capacity_.load(std::memory_order_relaxed); }

 private:
  Targets targets_;
  std::atomic<std::size_t> mailbox_capacity_;
  mutable std::mutex applied_mu_;
  AnyConfig applied_;  // guarded by applied_mu_
};

}  // namespace elfin::detail
