// Context::try_forward_to: a received envelope sent on unchanged — sender, trace id and the
// requester's answer duty go with it; a failed forward leaves the duty with the forwarder.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

/// Learns where to forward from a Tick (a raw address), then forwards every Echo there — after
/// a first try to an address nobody has.
Task<> forward_relay(Context<> ctx) {
  Addr target;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* tick = envelope->get<Tick>()) target = Addr{tick->n};
    if (!envelope->is<Echo>()) continue;
    Envelope echo = std::move(*envelope);
    const Addr nobody = Addr::make(ctx.addr().node_no(), target.group_no(), 77, 4000);
    auto first = ctx.try_forward_to(nobody, echo);
    journal().add(first ? "relay: first ok" : "relay: first failed");
    auto second = ctx.try_forward_to(target, echo);
    journal().add(fmt::format("relay: second {}", second ? "ok" : name_of(second.error())));
  }
}

Task<> forward_answerer(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<Echo>()) continue;
    journal().add(fmt::format("answerer: from {}", envelope->sender().raw()));
    ctx.respond(envelope->take_token<Echo>(), "answered " + envelope->get<Echo>()->text);
  }
}

}  // namespace

TEST_CASE("try_forward_to hands a request on with its requester; a failed forward keeps the duty", "[core][forward]") {
  journal().clear();
  Topology topology;
  topology.local("subject").mount(ActorGroup().exec(forward_relay));
  topology.local("answerer").mount(ActorGroup().exec(forward_answerer));
  auto proxy = testing::proxy(std::move(topology), "subject", StartOptions{}, testing::ProxyOptions{});
  proxy.send(Tick{proxy.system().group_addr("answerer").raw()});
  auto answer = proxy.request_fallible(Echo{"hi"});
  REQUIRE(answer);
  CHECK(*answer == "answered hi");
  // The answerer saw the proxy as the sender, not the relay.
  CHECK(sorted(journal().lines()) ==
        sorted({"relay: first failed", "relay: second ok", fmt::format("answerer: from {}", proxy.addr().raw())}));
}
