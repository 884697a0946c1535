// The configurer's protocol: ask it to reload the node's config file.
//
//   auto report = co_await ctx.request(elfin::configurer::ReloadConfigs{});
//   auto forced = co_await ctx.request(elfin::configurer::ReloadConfigs::forcing());
//
// A reload re-reads the file, checks every group's section against its config type, asks the
// groups to validate (ValidateConfig), and only if all of that passes sends UpdateConfig — to the
// groups whose section changed, or to every group when forced. A rejected reload changes
// nothing; the report says why.
#pragma once

#include <string>
#include <vector>

#include <elfin/config.hpp>
#include <elfin/message.hpp>

namespace elfin::configurer {

/// The configurer's answer to ReloadConfigs.
struct ReloadReport {
  bool accepted = false;
  /// Why the reload was rejected: one line per problem, each naming file, line and key.
  std::string reason;
  /// Groups that got UpdateConfig.
  std::vector<std::string> updated;
  /// Unknown keys and sections that match no group; they do not stop a reload.
  std::vector<std::string> warnings;
  ELFIN_CONFIG(accepted, reason, updated, warnings);
};

/// Reloads the config file; `force` updates every group, changed or not (SIGUSR2), otherwise
/// only the groups whose section changed (SIGHUP).
struct ReloadConfigs {
  bool force = false;
  [[nodiscard]] static ReloadConfigs forcing() { return ReloadConfigs{true}; }
  ELFIN_REQUEST(configurer, ReloadConfigs, ReloadReport, force);
};

}  // namespace elfin::configurer

ELFIN_EXTERN_MESSAGE(elfin::configurer::ReloadConfigs);  // compiled once, in src/configurer.cpp
