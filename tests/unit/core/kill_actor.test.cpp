// Context::kill: one actor ends another without its cooperation, at the victim's next suspension.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/detail/request_state.hpp>
#include <elfin/detail/send_op.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using namespace elfin;
using namespace elfin::test;

namespace {

constexpr std::uint64_t kKillerKey = 0;

/// Lets a "busy" victim out of its loop.
std::atomic<bool> g_release_victim{false};

/// Writes to the journal when the victim's frame goes, however it goes.
struct VictimGuard {
  std::uint64_t key;
  ~VictimGuard() { journal().add(fmt::format("victim {}: frame destroyed", key)); }
};

/// Key 0 kills the actor whose raw address a Tick carries; every other key is a victim that waits
/// the way its first Keyed message's mode says.
Task<> kill_subject(Context<NoConfig, std::uint64_t> ctx) {
  if (ctx.key() == kKillerKey) {
    while (auto envelope = co_await ctx.recv()) {
      if (const auto* tick = envelope->get<Tick>()) {
        journal().add(ctx.kill(Addr{tick->n}, "test") ? "kill: yes" : "kill: no");
      }
    }
    co_return;
  }
  const std::uint64_t key = ctx.key();
  VictimGuard guard{key};
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Tick>()) journal().add(fmt::format("victim {}: delay fired", key));
    if (envelope->is<WhoAmI>()) ctx.respond(envelope->take_token<WhoAmI>(), ctx.addr().raw());
    const auto* keyed = envelope->get<Keyed>();
    if (keyed == nullptr) continue;
    if (keyed->mode == "request") {
      journal().add(fmt::format("victim {}: waiting", key));
      auto answer = co_await ctx.request(Gate{"hold"});
      journal().add(fmt::format("victim {}: answered {}", key, answer.ok()));
    } else if (keyed->mode == "recv") {
      ctx.attach(Delay(1s, Tick{key}));
      journal().add(fmt::format("victim {}: parked", key));
    } else if (keyed->mode == "busy") {
      journal().add(fmt::format("victim {}: busy", key));
      while (!g_release_victim.load()) {
      }
      co_await ctx.yield_now();
      journal().add(fmt::format("victim {}: after yield", key));
    }
  }
}

Blueprint kill_blueprint() {
  return ActorGroup()
      .router(MapRouter<std::uint64_t>([](const Envelope& e) {
        using O = Outcome<std::uint64_t>;
        if (const auto* keyed = e.get<Keyed>()) return O::Unicast(keyed->key);
        if (e.is<Tick>()) return O::Unicast(kKillerKey);
        return O::Default();
      }))
      .restart_policy(RestartPolicy::always(RestartParams{1ms, 1ms}))
      .exec(kill_subject);
}

testing::Proxy start_kill_system(StatusLog& statuses, bool virtual_time) {
  Topology topology;
  topology.local("subject").mount(kill_blueprint());
  StartOptions start;
  start.on_status = statuses.callback();
  testing::ProxyOptions options;
  options.virtual_time = virtual_time;
  return testing::proxy(std::move(topology), "subject", std::move(start), options);
}

std::shared_ptr<detail::ActorCell> victim_cell(testing::Proxy& proxy, std::uint64_t key) {
  auto* group = static_cast<detail::Supervisor<NoConfig, std::uint64_t>*>(proxy.system().core_group("subject"));
  return group->actor(key, false);
}

Addr victim_addr(testing::Proxy& proxy, std::uint64_t key) {
  auto cell = victim_cell(proxy, key);
  REQUIRE(cell);
  return cell->addr();
}

}  // namespace

TEST_CASE("kill ends an actor parked in a request: frame destroyed, queued requests fail, Terminated, no restart",
          "[core][kill_actor]") {
  journal().clear();
  StatusLog statuses;
  auto proxy = start_kill_system(statuses, false);
  proxy.send(Keyed{1, {}, "request"});
  auto held = expect_gate(proxy);  // the victim waits for this answer, which never comes
  REQUIRE(journal().wait_for_line("victim 1: waiting"));
  const Addr victim = victim_addr(proxy, 1);

  // A request queued behind the one the victim waits on.
  auto queued = std::make_shared<detail::RequestState<std::uint64_t>>(false, detail::Waker{});
  Envelope request = Envelope::make(WhoAmI{1}, Addr{}, TraceId{}, MessageKind::Request);
  detail::EnvelopeAccess::block(request)->request = queued;
  detail::SendOp op{proxy.system().core(), victim, std::move(request), detail::SendMode::Unbounded};
  REQUIRE(op.run(nullptr));
  queued->release_sender();

  proxy.send(Tick{victim.raw()});
  REQUIRE(journal().wait_for_line("kill: yes"));
  REQUIRE(journal().wait_for_line("victim 1: frame destroyed"));
  auto terminated = statuses.wait_for("subject", "1", ActorStatusKind::Terminated);
  REQUIRE(terminated);
  CHECK(terminated->details() == "killed: test");
  REQUIRE(eventually([&] { return queued->done(); }));
  CHECK_FALSE(queued->take_any().ok());
  CHECK(proxy.system().core_group("subject")->restarting_actors() == 0);
  CHECK(journal().with_prefix("victim 1: answered").empty());

  // Once it left its group its address is gone: a second kill finds nobody. The key itself
  // starts afresh.
  REQUIRE(eventually([&] { return victim_cell(proxy, 1) == nullptr; }));
  proxy.send(Tick{victim.raw()});
  REQUIRE(journal().wait_for_line("kill: no"));
  std::move(held).respond("late");  // nobody waits for it any more
  proxy.send(Keyed{1, {}, "recv"});
  REQUIRE(journal().wait_for_line("victim 1: parked"));
  CHECK(victim_addr(proxy, 1) != victim);
}

TEST_CASE("kill ends an actor parked in recv: its timers never fire", "[core][kill_actor]") {
  journal().clear();
  StatusLog statuses;
  auto proxy = start_kill_system(statuses, true);
  proxy.send(Keyed{2, {}, "recv"});
  proxy.send(Keyed{3, {}, "recv"});  // not killed: its delay fires
  REQUIRE(journal().wait_for_line("victim 2: parked"));
  REQUIRE(journal().wait_for_line("victim 3: parked"));
  proxy.send(Tick{victim_addr(proxy, 2).raw()});
  REQUIRE(journal().wait_for_line("victim 2: frame destroyed"));
  proxy.advance(2s);
  REQUIRE(journal().wait_for_line("victim 3: delay fired"));
  CHECK(journal().with_prefix("victim 2: delay fired").empty());
  REQUIRE(statuses.wait_for("subject", "2", ActorStatusKind::Terminated));
  CHECK(statuses.kinds_of("subject", "2") == std::vector<ActorStatusKind>{ActorStatusKind::Initializing,
                                                                          ActorStatusKind::Normal,
                                                                          ActorStatusKind::Terminated});
}

TEST_CASE("kill ends an actor busy in a synchronous loop only at its next suspension", "[core][kill_actor]") {
  journal().clear();
  g_release_victim = false;
  StatusLog statuses;
  auto proxy = start_kill_system(statuses, false);
  proxy.send(Keyed{4, {}, "busy"});
  REQUIRE(journal().wait_for_line("victim 4: busy"));
  proxy.send(Tick{victim_addr(proxy, 4).raw()});
  REQUIRE(journal().wait_for_line("kill: yes"));
  // Still spinning on its worker: nothing can stop it there.
  CHECK(journal().with_prefix("victim 4: frame destroyed").empty());
  g_release_victim = true;
  REQUIRE(journal().wait_for_line("victim 4: frame destroyed"));
  CHECK(journal().with_prefix("victim 4: after yield").empty());
  CHECK(statuses.wait_for("subject", "4", ActorStatusKind::Terminated));
}
