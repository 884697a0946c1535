// The sim remote group: a local group of forwarders, one per target node, that put what they
// receive on the simulated network (or, for this very node, hand it to the local group).
#include <elfin/testing/sim_remote_group.hpp>

#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/context.hpp>
#include <elfin/detail/awaitables.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/map_router.hpp>

#include "sim_network_state.hpp"

namespace elfin::testing {

namespace {

using ForwarderContext = Context<NoConfig, std::uint16_t>;

/// What reaches this forwarder goes to node `ctx.key()`'s group `remote_name`, over the network.
Task<> forward(ForwarderContext ctx, std::shared_ptr<SimLink> link, std::string remote_name) {
  const std::uint16_t to = ctx.key();
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;  // UpdateConfig, Terminate, ... are for us
    link->net->send(link->node_no, to, remote_name, *envelope);
  }
}

/// A pick chose this node: what reaches this forwarder goes, in order, to the local group.
Task<> forward_local(ForwarderContext ctx, std::string local_name) {
  detail::ActorCell* self = detail::ActorCellAccess::cell(ctx);
  detail::SystemCore& system = self->group().system();
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    auto* group = detail::find_group(system, local_name);
    if (group == nullptr) continue;  // a request among them is answered as undelivered
    detail::SendOpAwaitable delivery{
        self, detail::SendOp{system, group->addr(), std::move(*envelope), detail::SendMode::Bounded}};
    auto done = co_await delivery;
    (void)done;  // refused by the group's router: a request is answered as undelivered
  }
}

}  // namespace

Blueprint sim_remote_group(SimRemoteGroupOptions options) {
  return Blueprint{[options = std::move(options)](detail::GroupInit init) {
    const SimLink* starting = starting_sim_node();
    if (starting == nullptr) {
      throw std::logic_error(fmt::format(
          "sim_remote_group `{}`: mounted in a system that no SimCluster starts (use elfin::network::remote_group)",
          init.name));
    }
    auto link = std::make_shared<SimLink>(*starting);
    const std::string remote_name = options.remote_name.empty() ? init.name : options.remote_name;
    MapRouter<std::uint16_t> router{[link, options](const Envelope& e) -> Outcome<std::uint16_t> {
      using O = Outcome<std::uint16_t>;
      if (e.vtable().is_system) return O::Default();
      auto connected = link->net->connected(link->node_no, options.nodes);
      if (options.pick) {
        auto n = options.pick(e, connected);
        return n ? O::Unicast(*n) : O::Discard();
      }
      if (connected.empty()) return O::Discard();
      if (options.routing == SimRouting::Broadcast) return O::Multicast(std::move(connected));
      return O::Unicast(connected.front());
    }};
    return ActorGroup()
        .router(std::move(router))
        .stop_with_system_groups()  // as network::remote_group: user groups send through it while they stop
        .exec([link, remote_name](ForwarderContext ctx) {
          if (ctx.key() == link->node_no) return forward_local(ctx, remote_name);
          return forward(ctx, link, remote_name);
        })
        .instantiate(std::move(init));
  }};
}

}  // namespace elfin::testing
