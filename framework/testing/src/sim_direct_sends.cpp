// Sends to actor addresses on other nodes: like the network battery, the simulated cluster gives
// every node a group of direct forwarders (one per target node) and makes it the system's remote
// router, so `send_to(envelope.sender(), reply)` to an actor of another node crosses the
// simulated network like any message of a remote group.
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include <elfin/actor_group.hpp>
#include <elfin/context.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/map_router.hpp>

#include "sim_network_state.hpp"

namespace elfin::testing {

namespace {

/// The system's remote router: a send to another node's address goes to that node's forwarder.
class DirectRouter final : public detail::RemoteRouter {
 public:
  std::optional<SendErrorKind> resolve(Addr, const Envelope& envelope, detail::Targets& out) override {
    auto* group = detail::find_group(*system_, kSimDirectGroup);
    if (group == nullptr) return SendErrorKind::UnknownAddr;
    group->resolve(envelope, out);
    return out.empty() ? std::optional{SendErrorKind::NoRoute} : std::nullopt;
  }
  detail::SystemCore* system_ = nullptr;
};

using ForwarderContext = Context<NoConfig, std::uint16_t>;

Task<> forward_direct(ForwarderContext ctx, std::shared_ptr<SimLink> link) {
  const std::uint16_t to = ctx.key();
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    link->net->send(link->node_no, to, std::string{}, *envelope);
  }
}

}  // namespace

Blueprint sim_direct_forwarders() {
  return Blueprint{[](detail::GroupInit init) {
    const SimLink* starting = starting_sim_node();
    if (starting == nullptr) throw std::logic_error("sim direct forwarders outside a SimCluster");
    auto link = std::make_shared<SimLink>(*starting);
    // Kept by the system until it is destroyed, after its actors: the router outlives every send.
    auto router = detail::system_extension<DirectRouter>(*init.system, "elfin.testing.sim_direct");
    router->system_ = init.system;
    detail::set_remote_router(*init.system, router.get());
    const std::uint16_t self = link->node_no;
    MapRouter<std::uint16_t> by_node{[self](const Envelope& e) -> Outcome<std::uint16_t> {
      using O = Outcome<std::uint16_t>;
      if (e.vtable().is_system) return O::Default();
      const Addr recipient = detail::EnvelopeAccess::block(e)->recipient;
      if (recipient.is_null() || recipient.node_no() == self) return O::Discard();
      return O::Unicast(recipient.node_no());
    }};
    return ActorGroup()
        .router(std::move(by_node))
        .exec([link](ForwarderContext ctx) { return forward_direct(ctx, link); })
        .instantiate(std::move(init));
  }};
}

}  // namespace elfin::testing
