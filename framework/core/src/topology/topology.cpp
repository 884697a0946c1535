#include <elfin/topology.hpp>

namespace elfin {

namespace filters {
Filter all() {
  return [](const Envelope&) { return true; };
}
Filter protocol(std::string protocol) {
  return [protocol = std::move(protocol)](const Envelope& e) { return e.protocol() == protocol; };
}
}  // namespace filters

Local Topology::local(std::string name) {
  auto& groups = data_->groups;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].name == name) return Local{data_, i};
  }
  groups.push_back(GroupDecl{std::move(name), std::nullopt, false, {}});
  return Local{data_, groups.size() - 1};
}

Local& Local::route_to(const Local& to, Filter filter) {
  decl().routes.push_back(RouteDecl{to.index_, std::move(filter)});
  return *this;
}

Local& Local::mount(Blueprint blueprint) {
  decl().blueprint = std::move(blueprint);
  return *this;
}

Local& Local::entrypoint() {
  decl().entrypoint = true;
  return *this;
}

const std::string& Local::name() const { return decl().name; }

}  // namespace elfin
