// System::kill: a system stopped at once, as a crash would stop it (the simulated cluster's
// crashes are made of it).
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <elfin/detail/send_op.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using namespace elfin;
using namespace elfin::test;

namespace {

/// Writes to the journal when the actor's frame goes, however it goes.
struct FrameGuard {
  ~FrameGuard() { journal().add("stuck: frame destroyed"); }
};

/// On Start asks the keeper for a Gate it never answers, so whatever comes after waits in the
/// mailbox; journals a Terminate if it ever sees one.
Task<> stuck(Context<> ctx) {
  FrameGuard guard;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Terminate>()) journal().add("stuck: terminate");
    if (!envelope->is<Start>()) continue;
    journal().add("stuck: waiting");
    auto answer = co_await ctx.request(Gate{"hold"});
    journal().add(answer ? "stuck: answered" : "stuck: failed");
  }
}

Task<> keeper(Context<> ctx) {
  std::vector<ResponseToken<Gate>> held;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Gate>()) held.push_back(envelope->take_token<Gate>());
  }
}

}  // namespace

TEST_CASE("kill stops a system at once: no Terminate, queued requests fail, frames are destroyed", "[core][kill]") {
  journal().clear();
  Topology topology;
  auto stuck_group = topology.local("stuck");
  auto keepers = topology.local("keeper");
  stuck_group.route_to(keepers, [](const Envelope& e) { return e.is<Gate>(); });
  stuck_group.mount(ActorGroup().exec(stuck));
  keepers.mount(ActorGroup().exec(keeper));
  StartOptions options;
  options.workers = 1;
  options.virtual_time = true;
  System system = start_or_fail(std::move(topology), std::move(options));
  REQUIRE(system.advance_time(0ms));  // settled: both actors run
  detail::SendOp start{system.core(), system.group_addr("stuck"), Envelope::make(Start{}, Addr{}, TraceId{}),
                       detail::SendMode::Unbounded};
  REQUIRE(start.run(nullptr));
  REQUIRE(journal().wait_for_line("stuck: waiting"));

  // A request from outside, queued behind the one the actor waits on.
  auto state = std::make_shared<detail::RequestState<std::string>>(false, detail::Waker{});
  Envelope request = Envelope::make(Gate{"queued"}, Addr{}, TraceId{}, MessageKind::Request);
  detail::EnvelopeAccess::block(request)->request = state;
  detail::SendOp op{system.core(), system.group_addr("stuck"), std::move(request), detail::SendMode::Unbounded};
  REQUIRE(op.run(nullptr));
  state->release_sender();
  REQUIRE(system.advance_time(0ms));
  REQUIRE_FALSE(state->done());

  system.kill("power cut");
  CHECK(state->done());
  CHECK_FALSE(state->take_any().ok());
  CHECK(system.join_for(0ms));
  CHECK(system.failure() == std::optional<std::string>("power cut"));
  CHECK(journal().lines() == std::vector<std::string>{"stuck: waiting", "stuck: frame destroyed"});
  system.terminate("after the kill");  // nothing left to do
  system.kill("again");                // idempotent
  CHECK(system.failure() == std::optional<std::string>("power cut"));
}

TEST_CASE("kill after a terminate began still ends the system at once", "[core][kill]") {
  journal().clear();
  Topology topology;
  topology.local("keeper").mount(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(keeper));
  StartOptions options;
  options.workers = 1;
  options.virtual_time = true;
  System system = start_or_fail(std::move(topology), std::move(options));
  REQUIRE(system.advance_time(0ms));
  system.terminate("polite");  // the keeper ignores it: termination would wait 30 s of virtual time
  CHECK_FALSE(system.join_for(0ms));
  system.kill("then a crash");
  CHECK(system.join_for(kDeadline));
}
