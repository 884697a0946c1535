#include <elfin/blueprint_registry.hpp>

#include <fmt/format.h>

namespace elfin {

Result<void, TopologyError> BlueprintRegistry::add(std::string name, Blueprint blueprint, std::string description) {
  if (name.empty()) return Err{TopologyError(TopologyError::BlueprintName, "a blueprint needs a name")};
  if (items_.contains(name)) {
    return Err{
        TopologyError(TopologyError::BlueprintName, fmt::format("a blueprint named `{}` is already registered", name))};
  }
  items_.emplace(std::move(name), Item{std::move(blueprint), std::move(description)});
  return {};
}

const Blueprint* BlueprintRegistry::find(std::string_view name) const {
  auto it = items_.find(name);
  return it == items_.end() ? nullptr : &it->second.blueprint;
}

std::vector<BlueprintRegistry::Entry> BlueprintRegistry::entries() const {
  std::vector<Entry> out;
  out.reserve(items_.size());
  for (const auto& [name, item] : items_) out.push_back(Entry{name, item.description});
  return out;
}

Result<void, TopologyError> BlueprintRegistry::add_selector(std::string name, NodeSelector selector,
                                                            std::string description) {
  if (name.empty()) return Err{TopologyError(TopologyError::BlueprintName, "a node selector needs a name")};
  if (!selector) {
    return Err{TopologyError(TopologyError::BlueprintName, fmt::format("node selector `{}` is empty", name))};
  }
  if (selectors_.contains(name)) {
    return Err{TopologyError(TopologyError::BlueprintName,
                             fmt::format("a node selector named `{}` is already registered", name))};
  }
  selectors_.emplace(std::move(name), SelectorItem{std::move(selector), std::move(description)});
  return {};
}

const NodeSelector* BlueprintRegistry::find_selector(std::string_view name) const {
  auto it = selectors_.find(name);
  return it == selectors_.end() ? nullptr : &it->second.selector;
}

std::vector<BlueprintRegistry::Entry> BlueprintRegistry::selectors() const {
  std::vector<Entry> out;
  out.reserve(selectors_.size());
  for (const auto& [name, item] : selectors_) out.push_back(Entry{name, item.description});
  return out;
}

}  // namespace elfin
