// Requests and responses: answered, ignored, failed; "any" and ".all()"; forgotten tokens.
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;
using Lines = std::vector<std::string>;
using namespace std::chrono_literals;

namespace {

Task<> counter(Context<> ctx) {
  std::uint64_t value = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Increment& m) { value += m.delta; },
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), value); },
        [&](const Echo&, ResponseToken<Echo>) { /* dropped on purpose: Ignored */ });
  }
}

Blueprint counters() { return ActorGroup().exec(counter); }

// --- a keyed group of responders and one requester -------------------------------------------
// Key 0 is the requester: on Ask it requests a Question through its own group's router and
// reports the outcome as Answers. Responders answer Question by key:
//   1..99     answer their key ("5"); with mode "notify" also report Seen{key, "answered"}
//   100..199  drop the token (Ignored)
//   200..299  first ask the test for a Gate; "close" closes the mailbox and returns without
//             handling anything, anything else makes them answer like 1..99
//   300..     report whether the token is forgotten, then answer

constexpr Key kRequester = 0;

Outcome<Key> route_questions(const Envelope& e) {
  if (e.is<Ask>()) return Outcome<Key>::Unicast(kRequester);
  if (const auto* q = e.get<Question>()) {
    if (q->mode == "broadcast") return Outcome<Key>::Broadcast();
    if (q->mode == "discard") return Outcome<Key>::Discard();
    if (!q->keys.empty()) return Outcome<Key>::Multicast(q->keys);
    return Outcome<Key>::Unicast(q->key);
  }
  if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key);
  return Outcome<Key>::Default();
}

Task<> requester(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    const Ask* ask = envelope->get<Ask>();
    if (ask == nullptr) continue;
    Question question{ask->key, ask->keys, ask->mode};
    Answers answers;
    if (ask->how == "all") {
      auto results = co_await ctx.request_to(ctx.group_addr(), std::move(question)).all();
      answers.results = describe(results);
    } else if (ask->how == "nowhere") {
      const Addr nowhere = Addr::group(ctx.addr().node_no(), 250);
      auto result = co_await ctx.request_to(nowhere, std::move(question));
      answers.results = {describe(result)};
    } else if (ask->how == "timeout") {  // 100 ms for the first answer
      auto result = co_await ctx.request_to(ctx.group_addr(), std::move(question)).timeout(100ms);
      answers.results = {describe(result)};
    } else if (ask->how == "timeout all") {
      auto results = co_await ctx.request_to(ctx.group_addr(), std::move(question)).timeout(100ms).all();
      answers.results = describe(results);
    } else if (ask->how == "timeout long") {  // answered long before it would expire
      auto result = co_await ctx.request_to(ctx.group_addr(), std::move(question)).timeout(1h);
      answers.results = {describe(result)};
    } else {
      auto result = co_await ctx.request_to(ctx.group_addr(), std::move(question));
      answers.results = {describe(result)};
    }
    answers.trace = ctx.trace_id().raw();
    std::ignore = co_await ctx.send(std::move(answers));
  }
}

Task<> responder(Context<NoConfig, Key> ctx) {
  const Key key = ctx.key();
  if (key >= 200 && key < 300) {
    Gate gate{"responder"};
    auto answer = co_await ctx.request(std::move(gate));
    if (answer && answer.value() == "close") {
      ctx.close();
      co_return;  // whatever is queued is never handled
    }
  }
  while (auto envelope = co_await ctx.recv()) {
    std::optional<Seen> report;
    co_await handle(*envelope, [&](const Question& q, ResponseToken<Question> token) {
      if (key >= 100 && key < 200) return;  // the token dies unanswered
      if (key >= 300) report = Seen{key, token.is_forgotten() ? "forgotten" : "obligated"};
      ctx.respond(std::move(token), std::to_string(key));
      if (q.mode == "notify") report = Seen{key, "answered"};
    });
    if (report) std::ignore = co_await ctx.send(std::move(*report));
  }
}

Blueprint questions() {
  return ActorGroup().router(MapRouter<Key>(route_questions)).exec([](Context<NoConfig, Key> ctx) {
    return ctx.key() == kRequester ? requester(std::move(ctx)) : responder(std::move(ctx));
  });
}

Lines ask(testing::Proxy& proxy, Ask a) {
  proxy.send(std::move(a));
  return proxy.recv_as<Answers>().results;
}

}  // namespace

TEST_CASE("a request is answered by the actor's respond", "[core][request]") {
  auto proxy = testing::proxy(counters());
  proxy.send(Increment{2});
  proxy.send(Increment{3});
  CHECK(proxy.request(GetValue{}) == 5);
}

TEST_CASE("a request whose token is dropped answers Ignored", "[core][request]") {
  auto proxy = testing::proxy(counters());
  auto result = proxy.request_fallible(Echo{"hi"});
  REQUIRE_FALSE(result.ok());
  CHECK(result.error() == RequestError::Ignored);
}

TEST_CASE("an actor's request resumes it with the responder's answer", "[core][request]") {
  auto proxy = testing::proxy(questions());
  CHECK(ask(proxy, Ask{"any", 5, {}, ""}) == Lines{"ok:5"});
  CHECK(ask(proxy, Ask{"any", 6, {}, ""}) == Lines{"ok:6"});
}

TEST_CASE("an actor's request whose token is dropped resumes it with Ignored", "[core][request]") {
  auto proxy = testing::proxy(questions());
  CHECK(ask(proxy, Ask{"any", 105, {}, ""}) == Lines{"err:Ignored"});
}

TEST_CASE("a request that no router accepts fails at once", "[core][request]") {
  auto proxy = testing::proxy(questions());
  CHECK(ask(proxy, Ask{"any", 5, {}, "discard"}) == Lines{"err:Failed"});
  CHECK(ask(proxy, Ask{"all", 5, {}, "discard"}).empty());  // nobody to answer
  auto direct = proxy.request_fallible(Question{5, {}, "discard"});
  REQUIRE_FALSE(direct.ok());
  CHECK(direct.error() == RequestError::Failed);
  CHECK(direct.error().reached_no_one());  // nothing handled it: safe to send again
}

TEST_CASE("a request to an address where nothing lives fails", "[core][request]") {
  auto proxy = testing::proxy(questions());
  CHECK(ask(proxy, Ask{"nowhere", 5, {}, ""}) == Lines{"err:Failed"});
  auto direct = proxy.request_fallible(Question{5, {}, ""}, Addr::group(proxy.subject_addr().node_no(), 250));
  REQUIRE_FALSE(direct.ok());
  CHECK(direct.error() == RequestError::Failed);
  CHECK(direct.error().reached_no_one());
}

TEST_CASE("a request fails when its recipient finishes before handling it", "[core][request]") {
  auto proxy = testing::proxy(questions());
  proxy.send(Keyed{200, {}, "hold"});
  auto gate = expect_gate(proxy);  // actor 200 waits for us and handles nothing meanwhile

  // A multicast pushes to its recipients in key order, so once 6 has answered, the question
  // is queued in 200's mailbox too.
  proxy.send(Ask{"all", 0, {200, 6}, "notify"});
  CHECK(recv_seen(proxy, 1) == Lines{"6:answered"});
  std::move(gate).respond("close");  // 200 closes its mailbox and finishes with the question queued

  CHECK(sorted(proxy.recv_as<Answers>().results) == Lines{"err:Failed", "ok:6"});
}

TEST_CASE("all() over a Multicast to three actors returns their three answers", "[core][request]") {
  auto proxy = testing::proxy(questions());
  CHECK(sorted(ask(proxy, Ask{"all", 0, {1, 2, 3}, ""})) == Lines{"ok:1", "ok:2", "ok:3"});
  CHECK(sorted(ask(proxy, Ask{"all", 0, {1, 101, 3}, ""})) == Lines{"err:Ignored", "ok:1", "ok:3"});
}

TEST_CASE("all() over a Broadcast returns one answer per running actor", "[core][request]") {
  auto proxy = testing::proxy(questions());
  for (Key key : {1, 2, 3}) proxy.send(Keyed{key, {}, "start"});
  auto answers = proxy.request_all(Question{0, {}, "broadcast"});
  std::vector<std::string> values;
  for (const auto& answer : answers) values.push_back(describe(answer));
  CHECK(sorted(values) == Lines{"ok:1", "ok:2", "ok:3"});
}

TEST_CASE("a request to several actors settles on the first Ok without waiting for the rest", "[core][request]") {
  auto proxy = testing::proxy(questions());
  proxy.send(Keyed{200, {}, "hold"});
  auto gate = expect_gate(proxy);  // 200 will not answer until we let it

  CHECK(ask(proxy, Ask{"any", 0, {200, 6}, ""}) == Lines{"ok:6"});
  CHECK(ask(proxy, Ask{"any", 0, {101, 7}, ""}) == Lines{"ok:7"});
  CHECK(ask(proxy, Ask{"any", 0, {101, 102}, ""}) == Lines{"err:Ignored"});
  std::move(gate).respond("go");
}

TEST_CASE("a request sent with a plain send carries a forgotten token, and answering it does nothing",
          "[core][request]") {
  auto proxy = testing::proxy(questions());
  proxy.send(Question{300, {}, ""});
  CHECK(recv_seen(proxy, 1) == Lines{"300:forgotten"});
  // The same actor goes on, and a real request to it is answered.
  CHECK(proxy.request(Question{300, {}, ""}) == "300");
  CHECK(recv_seen(proxy, 1) == Lines{"300:obligated"});
  proxy.sync();
  CHECK(drain_seen(proxy).empty());  // the discarded answer went nowhere
}

TEST_CASE("a request with a timeout that nobody answers in time resumes its actor with TimedOut", "[core][request]") {
  auto proxy = testing::proxy(questions());
  proxy.send(Keyed{200, {}, "hold"});
  auto gate = expect_gate(proxy);  // 200 answers nothing until we let it

  CHECK(ask(proxy, Ask{"timeout", 200, {}, ""}) == Lines{"err:TimedOut"});
  // .all(): the answers that came, and one TimedOut for the rest.
  CHECK(sorted(ask(proxy, Ask{"timeout all", 0, {200, 6}, ""})) == Lines{"err:TimedOut", "ok:6"});
  // Answered in time, the timeout changes nothing.
  CHECK(ask(proxy, Ask{"timeout long", 7, {}, ""}) == Lines{"ok:7"});
  CHECK(ask(proxy, Ask{"timeout", 8, {}, ""}) == Lines{"ok:8"});

  // 200 handles the questions that timed out when it gets to them; their late answers go nowhere
  // and the requester goes on.
  std::move(gate).respond("go");
  CHECK(ask(proxy, Ask{"any", 200, {}, ""}) == Lines{"ok:200"});
}

TEST_CASE("a request with a timeout expires while the recipient's mailbox stays full", "[core][request]") {
  auto proxy = testing::proxy(questions());
  proxy.send(Keyed{200, {}, "hold"});
  auto gate = expect_gate(proxy);  // 200 takes nothing from its mailbox until we let it
  std::size_t queued = 0;
  while (proxy.try_send(Keyed{200, {}, "fill"}).ok()) ++queued;
  REQUIRE(queued > 0);

  // The requester waits for room that never comes; the timeout ends the wait.
  CHECK(ask(proxy, Ask{"timeout", 200, {}, ""}) == Lines{"err:TimedOut"});
  std::move(gate).respond("go");
  CHECK(ask(proxy, Ask{"any", 200, {}, ""}) == Lines{"ok:200"});
}
