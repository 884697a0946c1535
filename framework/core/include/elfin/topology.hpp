// Topology: the actor groups of a node and the routes between them (inter-group routing).
//
//   Topology topology;
//   auto pingers = topology.local("pingers");
//   auto pongers = topology.local("pongers");
//   pingers.route_to(pongers, filters::protocol("pingpong"));   // which messages go where
//   pingers.mount(ping::blueprint()).entrypoint();
//   pongers.mount(pong::blueprint());
//
// A message sent without an address (`ctx.send(m)`) goes to every group whose route from the
// sender's group accepts it; each of those groups' routers then picks actors. Entrypoint groups
// receive their start-up `UpdateConfig` first.
//
// Thread safety: build a Topology on one thread, then hand it to `System::start`.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <elfin/blueprint.hpp>
#include <elfin/envelope.hpp>

namespace elfin {

/// Decides whether a route carries a message.
using Filter = std::function<bool(const Envelope&)>;

namespace filters {
/// Every message.
[[nodiscard]] Filter all();
/// Messages of one protocol.
[[nodiscard]] Filter protocol(std::string protocol);
/// Messages of the listed types.
template <Message... Ms>
[[nodiscard]] Filter messages() {
  return [](const Envelope& e) { return (e.is<Ms>() || ...); };
}
}  // namespace filters

struct RouteDecl {
  std::size_t to;  ///< index of the destination in `Topology::groups()`
  Filter filter;
};
struct GroupDecl {
  std::string name;
  std::optional<Blueprint> blueprint;
  bool entrypoint = false;
  std::vector<RouteDecl> routes;
};

namespace detail {
struct TopologyData {
  std::vector<GroupDecl> groups;
};
}  // namespace detail

/// A declared local group: where routes start and end, and where a blueprint is mounted.
class Local {
 public:
  /// Messages from this group that pass `filter` also go to `to`.
  Local& route_to(const Local& to, Filter filter);
  Local& route_all_to(const Local& to) { return route_to(to, filters::all()); }
  Local& mount(Blueprint blueprint);
  /// Start this group first (its actors get UpdateConfig before the others').
  Local& entrypoint();
  [[nodiscard]] const std::string& name() const;

 private:
  friend class Topology;
  Local(std::shared_ptr<detail::TopologyData> data, std::size_t index) : data_(std::move(data)), index_(index) {}
  GroupDecl& decl() const { return data_->groups[index_]; }
  std::shared_ptr<detail::TopologyData> data_;
  std::size_t index_;
};

class Topology {
 public:
  Topology() : data_(std::make_shared<detail::TopologyData>()) {}

  /// Declares a group (or returns the existing declaration of that name).
  Local local(std::string name);
  /// Declarations in the order they were made.
  [[nodiscard]] const std::vector<GroupDecl>& groups() const { return data_->groups; }

 private:
  std::shared_ptr<detail::TopologyData> data_;
};

}  // namespace elfin
