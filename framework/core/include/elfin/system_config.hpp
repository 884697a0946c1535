// SystemConfig: the `system` table of every group's config section — keys the runtime and the
// batteries read, not the group's own code.
//
//   [counters]
//   step = 2                       # the group's own key (its config struct)
//   system.mailbox.capacity = 500  # the runtime's
//
//   [counters.system.restart_policy]
//   when = "OnFailure"
//
// `mailbox` is read here; `restart_policy` (supervision), `logging`, `dumping` and `telemetry`
// (observability) are tables whose meaning belongs to those parts: they are carried as AnyConfig
// and decoded where they are used, so their keys are checked there.
//
// Thread safety: value types.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/config.hpp>

namespace elfin {

struct MailboxConfig {
  /// Messages an actor's mailbox holds; 0 keeps the blueprint's (or the default 100).
  std::size_t capacity = 0;
  ELFIN_CONFIG(capacity);
};

struct SystemConfig {
  MailboxConfig mailbox;
  AnyConfig restart_policy;
  AnyConfig logging;
  AnyConfig dumping;
  AnyConfig telemetry;
  ELFIN_CONFIG(mailbox, restart_policy, logging, dumping, telemetry);
};

/// Checks the `system` table of a group's section (`section` is the whole group section).
[[nodiscard]] ConfigReport check_system_config(const AnyConfig& section, std::string_view scope);

/// Checks the shape of a whole config document for a node with `groups`: a group's section (or
/// `common`) that is not a table is an error; a table that no group reads (a misspelt group name,
/// most likely) is a warning. `[common]` and `[system.runtime]` are always read.
[[nodiscard]] ConfigReport check_config_document(const AnyConfig& document, const std::vector<std::string>& groups);

}  // namespace elfin
