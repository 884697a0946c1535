#include <elfin/system_view.hpp>

#include <filesystem>

#include <fmt/format.h>

#include "system/system_core.hpp"

namespace elfin {

std::vector<SystemView::Group> SystemView::groups() const {
  std::vector<Group> out;
  for (const auto& g : core_->groups()) out.push_back(Group{g->name(), g->addr(), g->is_entrypoint()});
  return out;
}

ConfigReport SystemView::check_config(std::string_view group, const AnyConfig& section) const {
  auto* g = core_->find_group(group);
  if (g == nullptr) return ConfigReport{{fmt::format("no group named `{}`", group)}, {}};
  return g->check_config(section);
}

Result<void, ConfigError> SystemView::apply_config(std::string_view group, const AnyConfig& section) const {
  auto* g = core_->find_group(group);
  if (g == nullptr) {
    return Err{
        ConfigError(ConfigError::NoSuchGroup, fmt::format("no group named `{}`", group)).key(std::string(group))};
  }
  return g->apply_config(section);
}

AnyConfig SystemView::applied_config(std::string_view group) const {
  auto* g = core_->find_group(group);
  return g == nullptr ? AnyConfig{} : g->applied_config();
}

const std::string& SystemView::config_path() const { return core_->options().config_path; }

std::string SystemView::resolve_path(std::string_view path) const {
  const std::filesystem::path given(path);
  if (path.empty() || given.is_absolute() || config_path().empty()) return std::string(path);
  return (std::filesystem::path(config_path()).parent_path() / given).lexically_normal().string();
}

void SystemView::fail(std::string reason) const { core_->termination().fail(std::move(reason)); }

}  // namespace elfin
