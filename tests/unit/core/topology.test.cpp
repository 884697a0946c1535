// Topologies: two-level routing (inter-group routes by filter, then the group's router), sends
// to addresses, and what System::start refuses.
//
// The hand-built systems here have no test proxy: a driver actor runs a script when it starts and
// every actor writes what it got to the journal (test_support.hpp), which the test waits on.
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using elfin::test::other::Note;
using Key = std::uint64_t;
using Lines = std::vector<std::string>;

namespace {

// --- groups a (driver), b (keyed), c (singleton) -------------------------------------------------
//   a -> b : Keyed, Increment, WhoAmI          (filters::messages)
//   a -> c : protocol `other`, Increment, Echo (filters::protocol or filters::messages)
// b's router: Keyed by mode, Increment broadcast, WhoAmI by key, Note to key 9.

Filter either(Filter x, Filter y) {
  return [x = std::move(x), y = std::move(y)](const Envelope& e) { return x(e) || y(e); };
}

Outcome<Key> route_b(const Envelope& e) {
  if (const auto* k = e.get<Keyed>()) {
    if (k->mode == "discard") return Outcome<Key>::Discard();
    if (!k->keys.empty()) return Outcome<Key>::Multicast(k->keys);
    return Outcome<Key>::Unicast(k->key);
  }
  if (e.is<Increment>()) return Outcome<Key>::Broadcast();
  if (const auto* w = e.get<WhoAmI>()) return Outcome<Key>::Unicast(w->key);
  if (e.is<Note>()) return Outcome<Key>::Unicast(9);
  return Outcome<Key>::Default();
}

/// "Name" or "Name:detail" for the messages of these tests.
std::string describe_message(const Envelope& e) {
  if (const auto* k = e.get<Keyed>()) return "Keyed:" + k->mode;
  if (const auto* n = e.get<Note>()) return "Note:" + n->text;
  return std::string(e.name());
}

Task<> b_actor(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    journal().add(fmt::format("b/{}:{}", ctx.key(), describe_message(*envelope)));
    co_await handle(*envelope, [&](const WhoAmI&, ResponseToken<WhoAmI> token) {
      ctx.respond(std::move(token), ctx.addr().raw());
    });
  }
}

Task<> c_actor(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    journal().add("c/_:" + describe_message(*envelope));
    co_await handle(*envelope, [&](const Echo&, ResponseToken<Echo> token) {
      ctx.respond(std::move(token), std::to_string(ctx.addr().raw()));
    });
  }
}

Task<> a_driver(Context<> ctx) {
  std::ignore = co_await ctx.recv();  // the start-up ConfigUpdated
  auto note = [&](const std::string& what) { journal().add("a/_:" + what); };

  // Inter-group routes pick the groups, each group's router picks actors.
  Keyed to_one{1, {}, "unicast"};
  std::ignore = co_await ctx.send(std::move(to_one));
  Keyed to_two{0, {2, 3}, "multicast"};
  std::ignore = co_await ctx.send(std::move(to_two));
  Increment increment{1};
  std::ignore = co_await ctx.send(std::move(increment));  // both groups
  Note routed{"routed"};
  std::ignore = co_await ctx.send(std::move(routed));  // c only
  note("no route for Numbered: " + name_of(ctx.try_send(Numbered{})));
  note("b discards: " + name_of(ctx.try_send(Keyed{1, {}, "discard"})));

  // To an actor's address: exactly that actor, whatever the router would say.
  WhoAmI who{2};
  auto b2 = co_await ctx.request(std::move(who));
  if (!b2) {
    note("WhoAmI failed");
    co_return;
  }
  const Addr b2_addr{b2.value()};
  Keyed direct{1, {}, "direct"};
  std::ignore = co_await ctx.send_to(b2_addr, std::move(direct));

  // To a group's address: that group's router only, though no route from a carries Note to b.
  const Addr b_group = Addr::group(b2_addr.node_no(), b2_addr.group_no());
  Note to_group{"to-group"};
  auto sent_to_group = co_await ctx.send_to(b_group, std::move(to_group));
  note("send_to(b) Note: " + name_of(sent_to_group));

  Echo echo{"where"};
  auto c = co_await ctx.request(std::move(echo));
  if (!c) {
    note("Echo failed");
    co_return;
  }
  const Addr c_addr{std::stoull(c.value())};

  // Every actor answers a Ping after what it got before, so the journal is complete after this.
  Ping ping_b;
  std::ignore = co_await ctx.request_to(b_group, ping_b).all();
  Ping ping_c;
  std::ignore = co_await ctx.request_to(c_addr, ping_c);
  note("done");
  while (auto envelope = co_await ctx.recv()) {
  }
}

Topology abc() {
  Topology topology;
  auto a = topology.local("a");
  auto b = topology.local("b");
  auto c = topology.local("c");
  a.route_to(b, filters::messages<Keyed, Increment, WhoAmI>());
  a.route_to(c, either(filters::protocol("other"), filters::messages<Increment, Echo>()));
  a.mount(ActorGroup().exec(a_driver)).entrypoint();
  b.mount(ActorGroup().router(MapRouter<Key>(route_b)).exec(b_actor));
  c.mount(ActorGroup().exec(c_actor));
  return topology;
}

Task<> idle_actor(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

Blueprint idle() { return ActorGroup().exec(idle_actor); }

}  // namespace

TEST_CASE("messages go to the groups whose route filter accepts them, then to the actors their router picks",
          "[core][topology]") {
  journal().clear();
  auto system = start_or_fail(abc(), quick_options());
  REQUIRE(journal().wait_for_line("a/_:done"));
  CHECK(sorted(journal().lines()) == Lines{
                                         "a/_:b discards: NoRoute",
                                         "a/_:done",
                                         "a/_:no route for Numbered: NoRoute",
                                         "a/_:send_to(b) Note: ok",
                                         "b/1:Increment",
                                         "b/1:Keyed:unicast",
                                         "b/2:Increment",
                                         "b/2:Keyed:direct",
                                         "b/2:Keyed:multicast",
                                         "b/2:WhoAmI",
                                         "b/3:Increment",
                                         "b/3:Keyed:multicast",
                                         "b/9:Note:to-group",
                                         "c/_:Echo",
                                         "c/_:Increment",
                                         "c/_:Note:routed",
                                     });
  system.terminate();
  CHECK(system.join_for(kDeadline));
}

TEST_CASE("System::start refuses a group that is declared but has nothing mounted", "[core][topology]") {
  Topology topology;
  topology.local("ghost");
  auto system = System::start(std::move(topology), quick_options());
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("`ghost`"));
}

TEST_CASE("System::start refuses a group that routes to itself", "[core][topology]") {
  Topology topology;
  auto loop = topology.local("loop");
  loop.route_all_to(loop);
  loop.mount(idle());
  auto system = System::start(std::move(topology), quick_options());
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("`loop`") && Catch::Contains("itself"));
}

TEST_CASE("System::start gives each group an address and counts its running actors", "[core][topology]") {
  Topology topology;
  topology.local("first").mount(idle());
  topology.local("second").mount(idle());
  auto options = quick_options();
  options.node_no = 3;
  auto system = start_or_fail(std::move(topology), options);
  const Addr first = system.group_addr("first");
  const Addr second = system.group_addr("second");
  CHECK(first.is_group());
  CHECK(second.is_group());
  CHECK(first.node_no() == 3);
  CHECK(first != second);
  CHECK(system.group_addr("nope").is_null());
  CHECK(eventually([&] { return system.active_actors() == 2; }));  // both singletons start
  system.terminate();
  CHECK(system.join_for(kDeadline));
  // join() returns once every group is empty; the last actor's worker may still be finishing its
  // bookkeeping (address book, live count) for a moment, hence `eventually`.
  CHECK(eventually([&] { return system.active_actors() == 0; }));
}
