// SystemView: what a battery (the configurer, later the pinger and the network) may see and do
// of the system it runs in — its groups, their configs — from inside one of its actors.
//
//   auto view = SystemView::of(ctx);
//   for (const auto& group : view.groups()) { ... view.check_config(group.name, section) ... }
//
// Ordinary actor groups talk to each other with messages only; this is the runtime's side door
// for the few groups that manage the others, as elfo passes `&topology` to its configurer.
//
// Thread safety: the view may be copied and used from any thread while the system runs; each
// call is safe concurrently with message traffic.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/context.hpp>
#include <elfin/result.hpp>

namespace elfin {

namespace detail {
class SystemCore;
}

class SystemView {
 public:
  struct Group {
    std::string name;
    Addr addr;
    bool entrypoint = false;  ///< started by the system itself, before the configurer distributes configs
  };

  template <class C, class K>
  [[nodiscard]] static SystemView of(const Context<C, K>& ctx) {
    return SystemView{&detail::ActorCellAccess::cell(ctx)->group().system()};
  }

  /// The local groups, in topology order.
  [[nodiscard]] std::vector<Group> groups() const;
  /// Checks `section` against the group's config type and the `system` table; applies nothing.
  [[nodiscard]] ConfigReport check_config(std::string_view group, const AnyConfig& section) const;
  /// Decodes and stores `section` as the group's config (its actors see it after UpdateConfig).
  [[nodiscard]] Result<void, ConfigError> apply_config(std::string_view group, const AnyConfig& section) const;
  /// The group's section as last applied.
  [[nodiscard]] AnyConfig applied_config(std::string_view group) const;
  /// The config file the system was started from (StartOptions::config_path), or "".
  [[nodiscard]] const std::string& config_path() const;
  /// A file named in the config (`[system.dumpers] path`, a group's own files): a relative path is
  /// taken relative to the config file's directory, as `[node] config` is to the topology file's,
  /// so a node finds the same files from whatever directory it is started. Absolute paths, and
  /// any path when the system has no config file, are returned unchanged.
  [[nodiscard]] std::string resolve_path(std::string_view path) const;
  /// Terminates the system and marks it failed: `elfin::run` then exits with 1.
  void fail(std::string reason) const;

 private:
  explicit SystemView(detail::SystemCore* core) : core_(core) {}
  detail::SystemCore* core_;
};

}  // namespace elfin
