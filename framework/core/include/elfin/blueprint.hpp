// Blueprint: everything needed to run an actor group, before it has a name or a place in a
// topology. `ActorGroup...exec(f)` makes one; `topology.local("name").mount(bp)` places it.
//
// Thread safety: a value type; copies share the group's code, never its actors.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include <elfin/detail/group_runtime.hpp>

namespace elfin {

class [[nodiscard]] Blueprint {
 public:
  using Factory = std::function<std::unique_ptr<detail::GroupRuntime>(detail::GroupInit)>;

  explicit Blueprint(Factory factory) : factory_(std::move(factory)) {}

  /// Creates the running group (called by the system at start).
  [[nodiscard]] std::unique_ptr<detail::GroupRuntime> instantiate(detail::GroupInit init) const {
    return factory_(std::move(init));
  }

 private:
  Factory factory_;
};

}  // namespace elfin
