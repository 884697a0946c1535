// Inner-group routing: what each Outcome does (the elfo book, "Routing"), through the test proxy.
// Every actor reports "spawned" when it starts, "<mode>" for every Keyed it gets, and "closed"
// when its mailbox is closed. `proxy.sync()` (a Ping answered by every actor) makes the reports
// complete before the test looks at them.
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <utility>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;
using Lines = std::vector<std::string>;

namespace {

Outcome<Key> route_by_mode(const Envelope& e) {
  const auto* k = e.get<Keyed>();
  if (k == nullptr) return Outcome<Key>::Default();
  if (k->mode == "unicast" || k->mode == "unicast_stop") return Outcome<Key>::Unicast(k->key);
  if (k->mode == "gentle_unicast") return Outcome<Key>::GentleUnicast(k->key);
  if (k->mode == "multicast") return Outcome<Key>::Multicast(k->keys);
  if (k->mode == "gentle_multicast") return Outcome<Key>::GentleMulticast(k->keys);
  if (k->mode == "broadcast") return Outcome<Key>::Broadcast();
  if (k->mode == "discard") return Outcome<Key>::Discard();
  return Outcome<Key>::Default();
}

Task<> reporter(Context<NoConfig, Key> ctx) {
  Seen spawned{ctx.key(), "spawned"};
  std::ignore = co_await ctx.send(std::move(spawned));
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* k = envelope->get<Keyed>()) {
      Seen seen{ctx.key(), k->mode};
      std::ignore = co_await ctx.send(std::move(seen));
    }
  }
  Seen closed{ctx.key(), "closed"};
  std::ignore = co_await ctx.send(std::move(closed));
}

Task<> singleton_reporter(Context<> ctx) {
  Seen spawned{0, "spawned"};
  std::ignore = co_await ctx.send(std::move(spawned));
  while (auto envelope = co_await ctx.recv()) {
    Seen seen{0, std::string(envelope->name())};
    std::ignore = co_await ctx.send(std::move(seen));
  }
  Seen closed{0, "closed"};
  std::ignore = co_await ctx.send(std::move(closed));
}

Blueprint reporters() { return ActorGroup().router(MapRouter<Key>(route_by_mode)).exec(reporter); }

/// What the actors reported since the last call, sorted.
Lines reports(testing::Proxy& proxy) {
  proxy.sync();
  return sorted(drain_seen(proxy));
}

/// Starts actors 1, 2 and 3.
void spawn_three(testing::Proxy& proxy) {
  proxy.send(Keyed{0, {1, 2, 3}, "multicast"});
  REQUIRE(reports(proxy) == Lines{"1:multicast", "1:spawned", "2:multicast", "2:spawned", "3:multicast", "3:spawned"});
}

}  // namespace

TEST_CASE("Unicast starts the actor with the key if there is none, and reuses it after", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  proxy.send(Keyed{1, {}, "unicast"});
  CHECK(reports(proxy) == Lines{"1:spawned", "1:unicast"});
  proxy.send(Keyed{1, {}, "unicast"});
  CHECK(reports(proxy) == Lines{"1:unicast"});
}

TEST_CASE("GentleUnicast never starts an actor: with none for the key the message is discarded", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  CHECK(name_of(proxy.try_send(Keyed{7, {}, "gentle_unicast"})) == "NoRoute");
  CHECK(reports(proxy).empty());

  proxy.send(Keyed{7, {}, "unicast"});
  CHECK(reports(proxy) == Lines{"7:spawned", "7:unicast"});
  proxy.send(Keyed{7, {}, "gentle_unicast"});
  CHECK(reports(proxy) == Lines{"7:gentle_unicast"});
}

TEST_CASE("Multicast delivers to every listed key, starting the missing actors", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  proxy.send(Keyed{2, {}, "unicast"});
  CHECK(reports(proxy) == Lines{"2:spawned", "2:unicast"});
  proxy.send(Keyed{0, {1, 2, 3}, "multicast"});
  CHECK(reports(proxy) == Lines{"1:multicast", "1:spawned", "2:multicast", "3:multicast", "3:spawned"});
}

TEST_CASE("GentleMulticast delivers only to the listed actors that already run", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  CHECK(name_of(proxy.try_send(Keyed{0, {1, 2, 3}, "gentle_multicast"})) == "NoRoute");
  CHECK(reports(proxy).empty());

  proxy.send(Keyed{2, {}, "unicast"});
  CHECK(reports(proxy) == Lines{"2:spawned", "2:unicast"});
  proxy.send(Keyed{0, {1, 2, 3}, "gentle_multicast"});
  CHECK(reports(proxy) == Lines{"2:gentle_multicast"});
}

TEST_CASE("Broadcast delivers to every running actor of the group and starts none", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  CHECK(name_of(proxy.try_send(Keyed{0, {}, "broadcast"})) == "NoRoute");  // nobody runs yet
  spawn_three(proxy);
  proxy.send(Keyed{0, {}, "broadcast"});
  CHECK(reports(proxy) == Lines{"1:broadcast", "2:broadcast", "3:broadcast"});
}

TEST_CASE("Discard delivers to nobody and the sender gets NoRoute", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  spawn_three(proxy);
  CHECK(name_of(proxy.try_send(Keyed{1, {1, 2, 3}, "discard"})) == "NoRoute");
  CHECK_THROWS_AS(proxy.send(Keyed{1, {}, "discard"}), testing::ProxyError);
  CHECK(reports(proxy).empty());
}

TEST_CASE("Default discards user messages", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  spawn_three(proxy);
  CHECK(name_of(proxy.try_send(Keyed{1, {}, "default"})) == "NoRoute");
  CHECK(name_of(proxy.try_send(Increment{})) == "NoRoute");  // the router does not know it at all
  CHECK(reports(proxy).empty());
}

TEST_CASE("Default broadcasts system messages: every running actor answers a Ping", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  spawn_three(proxy);
  auto answers = proxy.request_all(Ping{}, proxy.subject_addr());
  REQUIRE(answers.size() == 3);
  for (const auto& answer : answers) CHECK(answer.ok());
}

TEST_CASE("Default broadcasts system messages: a Terminate closes every running actor", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  spawn_three(proxy);
  proxy.send_to(proxy.subject_addr(), Terminate{false, "routing test"});
  CHECK(sorted(recv_seen(proxy, 3)) == Lines{"1:closed", "2:closed", "3:closed"});
}

TEST_CASE("Default discards ValidateConfig even though it is a system message", "[core][routing]") {
  auto proxy = testing::proxy(reporters());
  spawn_three(proxy);
  auto answer = proxy.request_fallible(ValidateConfig{}, proxy.subject_addr());
  REQUIRE_FALSE(answer.ok());
  CHECK(answer.error() == RequestError::Failed);  // it reached nobody
  CHECK(name_of(proxy.try_send_to(proxy.subject_addr(), ValidateConfig{})) == "NoRoute");
}

TEST_CASE("a group without a router unicasts to its one actor, but Ping and Terminate never start it",
          "[core][routing]") {
  auto proxy = testing::proxy(ActorGroup().exec(singleton_reporter));
  // The UpdateConfig every group gets at start is what starts the singleton.
  CHECK(recv_seen(proxy, 2) == Lines{"0:spawned", "0:ConfigUpdated"});
  proxy.send(Increment{});
  CHECK(recv_seen(proxy, 1) == Lines{"0:Increment"});

  const auto live = proxy.system().active_actors();
  proxy.send_to(proxy.subject_addr(), Terminate{false, "routing test"});
  CHECK(recv_seen(proxy, 1) == Lines{"0:closed"});
  REQUIRE(eventually([&] { return proxy.system().active_actors() == live - 1; }));

  auto ping = proxy.request_fallible(Ping{}, proxy.subject_addr());
  REQUIRE_FALSE(ping.ok());
  CHECK(ping.error() == RequestError::Failed);
  CHECK(name_of(proxy.try_send_to(proxy.subject_addr(), Terminate{})) == "NoRoute");
  CHECK(drain_seen(proxy).empty());

  proxy.send(Increment{});  // any other message starts it again
  CHECK(recv_seen(proxy, 2) == Lines{"0:spawned", "0:Increment"});
}

namespace {

/// Holds the worker that closes an actor for good in the middle of it: the destructor of what
/// the actor's stream keeps alive runs while the closing drops the actor's sources, after its
/// mailbox closed and before it is unregistered.
struct ClosingGate {
  std::promise<void> in_window;
  std::promise<void> release;
};

struct HeldByStream {
  std::shared_ptr<ClosingGate> gate;
  HeldByStream(const HeldByStream&) = delete;
  HeldByStream& operator=(const HeldByStream&) = delete;
  explicit HeldByStream(std::shared_ptr<ClosingGate> g) : gate(std::move(g)) {}
  ~HeldByStream() {
    if (!gate) return;
    gate->in_window.set_value();
    gate->release.get_future().wait();
  }
};

std::shared_ptr<ClosingGate>& closing_gate() {
  static std::shared_ptr<ClosingGate> gate;  // taken by the first actor that starts
  return gate;
}

Task<> closing_reporter(Context<NoConfig, Key> ctx) {
  Seen spawned{ctx.key(), "spawned"};
  std::ignore = co_await ctx.send(std::move(spawned));
  while (auto envelope = co_await ctx.recv()) {
    const auto* k = envelope->get<Keyed>();
    if (k == nullptr) continue;
    if (k->mode == "unicast_stop") {
      // A stream attached on the way out is still attached when the actor ends, so what it
      // keeps alive is destroyed by the closing.
      auto held = std::make_shared<HeldByStream>(std::exchange(closing_gate(), nullptr));
      ctx.attach(Stream::generate([held](Emitter emitter) -> Task<> {
        Seen item{0, "item"};
        co_await emitter.emit(item);
      }));
      co_return;
    }
    Seen seen{ctx.key(), k->mode};
    std::ignore = co_await ctx.send(std::move(seen));
  }
}

}  // namespace

TEST_CASE("a message routed to a key whose actor is closing starts the key's next actor instead of failing",
          "[core][routing]") {
  auto gate = std::make_shared<ClosingGate>();
  closing_gate() = gate;
  auto proxy = testing::proxy(ActorGroup().router(MapRouter<Key>(route_by_mode)).exec(closing_reporter));
  proxy.send(Keyed{1, {}, "unicast"});
  CHECK(recv_seen(proxy, 2) == Lines{"1:spawned", "1:unicast"});

  // The actor ends; its worker stops in the middle of closing it.
  proxy.send(Keyed{1, {}, "unicast_stop"});
  auto in_window = gate->in_window.get_future();
  REQUIRE(in_window.wait_for(std::chrono::seconds(10)) == std::future_status::ready);

  // Its mailbox is closed and it is not unregistered yet: routing no longer gives it the key.
  auto sent = proxy.try_send(Keyed{1, {}, "unicast"});
  CHECK(sent.ok());
  gate->release.set_value();
  CHECK(recv_seen(proxy, 2) == Lines{"1:spawned", "1:unicast"});
}
