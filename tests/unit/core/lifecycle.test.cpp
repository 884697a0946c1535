// Lifecycle: statuses (Initializing, Normal, Terminating, Terminated, Failed, Alarming) as
// StartOptions::on_status reports them, closing a mailbox, and system termination with both
// termination policies.
#include <stdexcept>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;
using Kinds = std::vector<ActorStatusKind>;
using Lines = std::vector<std::string>;

namespace Catch {
template <>
struct StringMaker<ActorStatusKind> {
  static std::string convert(ActorStatusKind kind) { return std::string(elfin::to_string(kind)); }
};
}  // namespace Catch

namespace {

// --- a failing actor among healthy ones ----------------------------------------------------------
// "driver" asks worker 1 for its address, makes it throw, asks it again, then asks worker 2.

Outcome<Key> route_workers(const Envelope& e) {
  if (e.is<Boom>()) return Outcome<Key>::Unicast(1);
  if (const auto* q = e.get<Question>()) return Outcome<Key>::Unicast(q->key);
  return Outcome<Key>::Default();
}

Task<> worker(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Boom& m) { throw std::runtime_error("kaboom: " + m.why); },
        [&](const Question&, ResponseToken<Question> token) {
          ctx.respond(std::move(token), std::to_string(ctx.addr().raw()));
        });
  }
}

Task<> driver(Context<> ctx) {
  std::ignore = co_await ctx.recv();  // the start-up ConfigUpdated
  Question first{1, {}, ""};
  auto addr = co_await ctx.request(std::move(first));
  if (!addr) {
    journal().add("driver: no address");
    co_return;
  }
  const Addr one{std::stoull(addr.value())};
  Boom boom{"the test wants it"};
  std::ignore = co_await ctx.send_to(one, std::move(boom));
  Question again{1, {}, ""};
  auto after = co_await ctx.request_to(one, std::move(again));
  journal().add("after boom: " + describe(after));
  Question other{2, {}, ""};
  auto two = co_await ctx.request(std::move(other));
  journal().add(std::string("worker 2: ") + (two ? "answered" : describe(two)));
  journal().add("done");
  while (auto envelope = co_await ctx.recv()) {
  }
}

Topology failing_topology() {
  Topology topology;
  auto d = topology.local("driver");
  auto w = topology.local("workers");
  d.route_to(w, filters::messages<Boom, Question>());
  d.mount(ActorGroup().exec(driver)).entrypoint();
  w.mount(ActorGroup().router(MapRouter<Key>(route_workers)).exec(worker));
  return topology;
}

// --- singletons with one fate each --------------------------------------------------------------

Task<> calm(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

Task<Result<void, std::string>> erring(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  co_return Err{std::string("bad things happened")};
}

Task<Result<void, std::string>> succeeding(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  co_return Result<void, std::string>{};
}

Task<> returning(Context<> ctx) { std::ignore = co_await ctx.recv(); }

Task<> alarming(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  ctx.set_status(ActorStatus::ALARMING.with_details("the database is gone"));
  while (auto envelope = co_await ctx.recv()) {
  }
}

Task<> stopping_everything(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  ctx.terminate_system("the actor is done");
  while (auto envelope = co_await ctx.recv()) {
  }
}

/// Writes every Terminate it gets to the journal and never closes its mailbox itself.
Task<> stubborn(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* t = envelope->get<Terminate>()) journal().add("terminate: " + t->reason);
  }
  journal().add("end");
}

/// A system of one group named `name`, reporting statuses to `log`.
System start_one(StatusLog& log, const std::string& name, Blueprint blueprint, StartOptions options = quick_options()) {
  Topology topology;
  topology.local(name).mount(std::move(blueprint));
  options.on_status = log.callback();
  return start_or_fail(std::move(topology), std::move(options));
}

// --- gated singletons for the proxy tests -----------------------------------------------------

/// Takes the start-up message, asks the test for a Gate ("close" closes the mailbox first), then
/// reports everything it receives and "end" once `recv` returns nothing.
Task<> gated_reporter(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  Gate gate{"reporter"};
  auto answer = co_await ctx.request(std::move(gate));
  if (answer && answer.value() == "close") ctx.close();
  while (auto envelope = co_await ctx.recv()) {
    Seen seen{0, std::string(envelope->name())};
    if (const auto* i = envelope->get<Increment>()) seen.key = i->delta;
    std::ignore = ctx.unbounded_send(seen);
  }
  std::ignore = ctx.unbounded_send(Seen{0, "end"});
}

/// TerminationPolicy::manually: reports the Terminate, finishes its work, then closes.
Task<> manual_reporter(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* t = envelope->get<Terminate>()) {
      std::ignore = ctx.unbounded_send(Seen{0, "terminate: " + t->reason});
      std::ignore = ctx.unbounded_send(Seen{0, "flushed"});
      ctx.close();
    } else if (const auto* i = envelope->get<Increment>()) {
      std::ignore = ctx.unbounded_send(Seen{i->delta, "Increment"});
    }
  }
  std::ignore = ctx.unbounded_send(Seen{0, "end"});
}

}  // namespace

TEST_CASE("an actor that throws is Failed with the exception's text while the others keep running",
          "[core][lifecycle]") {
  journal().clear();
  StatusLog statuses;
  auto options = quick_options();
  options.on_status = statuses.callback();
  auto system = start_or_fail(failing_topology(), options);

  const auto failed = statuses.wait_for("workers", "1", ActorStatusKind::Failed);
  REQUIRE(failed);
  CHECK_THAT(failed->details(), Catch::Contains("kaboom: the test wants it"));
  REQUIRE(journal().wait_for_line("done"));
  CHECK(journal().lines() == Lines{"after boom: err:Failed", "worker 2: answered", "done"});
  const Kinds two = statuses.kinds_of("workers", "2");
  CHECK(std::find(two.begin(), two.end(), ActorStatusKind::Normal) != two.end());
  CHECK(std::none_of(two.begin(), two.end(), [](ActorStatusKind k) {
    return k == ActorStatusKind::Failed || k == ActorStatusKind::Terminated;
  }));
  CHECK(statuses.kinds_of("driver", "_").back() == ActorStatusKind::Normal);
}

TEST_CASE("an exec that returns an error is Failed with that reason", "[core][lifecycle]") {
  StatusLog statuses;
  auto system = start_one(statuses, "erring", ActorGroup().exec(erring));
  const auto failed = statuses.wait_for("erring", "_", ActorStatusKind::Failed);
  REQUIRE(failed);
  CHECK(failed->details() == "bad things happened");
}

TEST_CASE("an exec that returns normally is Terminated", "[core][lifecycle]") {
  StatusLog statuses;
  auto system = start_one(statuses, "returning", ActorGroup().exec(returning));
  REQUIRE(statuses.wait_for("returning", "_", ActorStatusKind::Terminated));
  CHECK(statuses.kinds_of("returning", "_").back() == ActorStatusKind::Terminated);

  StatusLog result_statuses;
  auto result_system = start_one(result_statuses, "succeeding", ActorGroup().exec(succeeding));
  REQUIRE(result_statuses.wait_for("succeeding", "_", ActorStatusKind::Terminated));
  const Kinds kinds = result_statuses.kinds_of("succeeding", "_");
  CHECK(std::find(kinds.begin(), kinds.end(), ActorStatusKind::Failed) == kinds.end());
}

TEST_CASE("an actor closed by system termination goes Initializing, Normal, Terminating, Terminated",
          "[core][lifecycle]") {
  StatusLog statuses;
  auto system = start_one(statuses, "calm", ActorGroup().exec(calm));
  REQUIRE(statuses.wait_for("calm", "_", ActorStatusKind::Normal));
  system.terminate("test over");
  REQUIRE(system.join_for(kDeadline));
  CHECK(statuses.kinds_of("calm", "_") == Kinds{ActorStatusKind::Initializing, ActorStatusKind::Normal,
                                                ActorStatusKind::Terminating, ActorStatusKind::Terminated});
}

TEST_CASE("an actor's own Alarming status is reported with its details", "[core][lifecycle]") {
  StatusLog statuses;
  auto system = start_one(statuses, "alarming", ActorGroup().exec(alarming));
  const auto alarm = statuses.wait_for("alarming", "_", ActorStatusKind::Alarming);
  REQUIRE(alarm);
  CHECK(alarm->details() == "the database is gone");
}

TEST_CASE("an actor can terminate the whole system", "[core][lifecycle]") {
  StatusLog statuses;
  auto system = start_one(statuses, "stopper", ActorGroup().exec(stopping_everything));
  CHECK(system.join_for(kDeadline));
  CHECK(statuses.kinds_of("stopper", "_").back() == ActorStatusKind::Terminated);
}

TEST_CASE("after ctx.close() the messages already queued are still received, then recv ends", "[core][lifecycle]") {
  auto proxy = testing::proxy(ActorGroup().exec(gated_reporter));
  auto gate = expect_gate(proxy);
  proxy.send(Increment{1});
  proxy.send(Increment{2});
  std::move(gate).respond("close");
  CHECK(recv_seen(proxy, 3) == Lines{"1:Increment", "2:Increment", "0:end"});
}

TEST_CASE("with TerminationPolicy::closing a Terminate closes the mailbox and the actor never sees it",
          "[core][lifecycle]") {
  auto proxy = testing::proxy(ActorGroup().exec(gated_reporter));
  auto gate = expect_gate(proxy);
  proxy.send(Increment{1});
  proxy.send(Increment{2});
  proxy.send_to(proxy.subject_addr(), Terminate{false, "closing"});
  proxy.send(Increment{3});  // queued before the mailbox closes: still delivered
  std::move(gate).respond("go");
  CHECK(recv_seen(proxy, 4) == Lines{"1:Increment", "2:Increment", "3:Increment", "0:end"});
}

TEST_CASE("with TerminationPolicy::manually the actor gets Terminate and termination waits until it closes",
          "[core][lifecycle]") {
  auto proxy = testing::proxy(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(manual_reporter));
  proxy.send(Increment{1});
  CHECK(recv_seen(proxy, 1) == Lines{"1:Increment"});
  proxy.system().terminate("bye");
  CHECK(recv_seen(proxy, 3) == Lines{"0:terminate: bye", "0:flushed", "0:end"});
  CHECK(proxy.system().join_for(kDeadline));
}

TEST_CASE("an actor that ignores a polite Terminate is closed by Terminate::closing after the grace period",
          "[core][lifecycle]") {
  journal().clear();
  StatusLog statuses;
  auto options = quick_options();
  options.terminate_closing_after = std::chrono::milliseconds(100);
  auto system = start_one(statuses, "stubborn",
                          ActorGroup().termination_policy(TerminationPolicy::manually()).exec(stubborn), options);
  REQUIRE(statuses.wait_for("stubborn", "_", ActorStatusKind::Normal));
  system.terminate("please stop");
  REQUIRE(system.join_for(kDeadline));
  CHECK(journal().lines() == Lines{"terminate: please stop", "end"});
  CHECK(statuses.kinds_of("stubborn", "_") == Kinds{ActorStatusKind::Initializing, ActorStatusKind::Normal,
                                                    ActorStatusKind::Terminating, ActorStatusKind::Terminated});
}
