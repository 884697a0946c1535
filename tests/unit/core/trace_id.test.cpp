// Trace ids: the 63-bit layout, generation (node, time, counter, uniqueness), and how an id
// follows a chain of messages: send, forward, request, response.
#include <chrono>
#include <map>
#include <thread>
#include <unordered_set>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

constexpr std::uint16_t kNode = 7;

std::uint64_t unix_seconds() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// `count` ids generated on a thread of their own (so its generator starts afresh).
std::vector<TraceId> generate_on_new_thread(std::size_t count) {
  std::vector<TraceId> ids;
  ids.reserve(count);
  std::thread([&] {
    for (std::size_t i = 0; i < count; ++i) ids.push_back(TraceId::generate());
  }).join();
  return ids;
}

// --- actors that report trace ids --------------------------------------------------------------
// Every actor reports Seen{key, "initial", its trace id} when it starts. On Keyed it reports the
// envelope's trace id ("env") and its own after recv ("ctx"); "renew_and_forward" first sets a
// fresh id; `keys[0]`, if any, gets a Keyed "report" next. A Question is answered with the
// envelope's trace id, after the responder switched to a fresh one of its own. Key 0 turns Ask
// into a request and reports Answers with its trace id once the answer is in.

Outcome<Key> route_trace(const Envelope& e) {
  if (e.is<Ask>()) return Outcome<Key>::Unicast(0);
  if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key);
  if (const auto* q = e.get<Question>()) return Outcome<Key>::Unicast(q->key);
  return Outcome<Key>::Default();
}

Task<> traced(Context<NoConfig, Key> ctx) {
  const Key key = ctx.key();
  Seen initial{key, "initial", ctx.trace_id().raw()};
  std::ignore = co_await ctx.send(std::move(initial));
  while (auto envelope = co_await ctx.recv()) {
    std::vector<Seen> reports;
    std::optional<Keyed> forward;
    std::optional<Question> question;
    const TraceId received = envelope->trace_id();
    co_await handle(
        *envelope,
        [&](const Keyed& k) {
          if (k.mode == "renew_and_forward") ctx.set_trace_id(TraceId::generate());
          reports.push_back(Seen{key, "env", received.raw()});
          reports.push_back(Seen{key, "ctx", ctx.trace_id().raw()});
          if (!k.keys.empty()) forward = Keyed{k.keys[0], {}, "report"};
        },
        [&](const Question&, ResponseToken<Question> token) {
          ctx.set_trace_id(TraceId::generate());  // the answer must still carry the request's id
          ctx.respond(std::move(token), std::to_string(received.raw()));
        },
        [&](const Ask& a) { question = Question{a.key, {}, ""}; });
    for (auto& report : reports) std::ignore = co_await ctx.send(std::move(report));
    if (forward) std::ignore = co_await ctx.send_to(ctx.group_addr(), std::move(*forward));
    if (question) {
      auto result = co_await ctx.request_to(ctx.group_addr(), std::move(*question));
      Answers answers{{describe(result)}, ctx.trace_id().raw()};
      std::ignore = co_await ctx.send(std::move(answers));
    }
  }
}

Blueprint traced_group() { return ActorGroup().router(MapRouter<Key>(route_trace)).exec(traced); }

testing::Proxy traced_proxy() { return testing::proxy(traced_group(), {}, testing::ProxyOptions{.node_no = kNode}); }

/// What the proxy received: Seen trace values by "key:what", the envelopes' own trace ids by the
/// same name, and Answers.
struct Inbox {
  std::map<std::string, std::uint64_t> seen;
  std::map<std::string, TraceId> envelope;
  std::vector<Answers> answers;
};

Inbox receive(testing::Proxy& proxy, std::size_t count) {
  Inbox inbox;
  for (std::size_t i = 0; i < count; ++i) {
    Envelope e = proxy.recv();
    if (const auto* s = e.get<Seen>()) {
      const std::string name = fmt::format("{}:{}", s->key, s->what);
      inbox.seen[name] = s->trace;
      inbox.envelope[name] = e.trace_id();
    } else if (const auto* a = e.get<Answers>()) {
      inbox.answers.push_back(*a);
    } else {
      FAIL("unexpected " << e.protocol() << "." << e.name());
    }
  }
  return inbox;
}

TraceId distinctive() { return TraceId::compose(123'456, kNode, 4000, 77); }

}  // namespace

TEST_CASE("TraceId::compose puts each field where its accessor finds it", "[core][trace_id]") {
  const TraceId id = TraceId::compose(0x1ABCDEF, 0xBEEF, 0xABC, 0x3FF);
  CHECK(id.timestamp() == 0x1ABCDEF);
  CHECK(id.node_no() == 0xBEEF);
  CHECK(id.chunk_no() == 0xABC);
  CHECK(id.counter() == 0x3FF);
  CHECK(id.raw() == ((std::uint64_t{0x1ABCDEF} << 38) | (std::uint64_t{0xBEEF} << 22) | (0xABCu << 10) | 0x3FFu));
  CHECK((id.raw() >> 63) == 0);
  CHECK(id.is_valid());
}

TEST_CASE("TraceId::compose keeps only the bits each field has", "[core][trace_id]") {
  const TraceId id = TraceId::compose(TraceId::kTimestampMax + 5, 1, 0x1001, 0x401);
  CHECK(id.timestamp() == 4);  // 25 bits: wraps after ~388 days
  CHECK(id.node_no() == 1);
  CHECK(id.chunk_no() == 1);
  CHECK(id.counter() == 1);
  CHECK((id.raw() >> 63) == 0);
}

TEST_CASE("a trace id is valid only when non-zero, with the top bit clear and a non-zero counter", "[core][trace_id]") {
  CHECK_FALSE(TraceId{}.is_valid());
  CHECK(TraceId{}.is_null());
  CHECK_FALSE(TraceId::compose(5, 1, 1, 0).is_valid());
  CHECK_FALSE(TraceId{TraceId::compose(5, 1, 1, 1).raw() | (std::uint64_t{1} << 63)}.is_valid());
  CHECK(TraceId::compose(0, 0, 0, 1).is_valid());
}

TEST_CASE("generated trace ids carry the node number the system was started with", "[core][trace_id]") {
  auto proxy = traced_proxy();
  CHECK(TraceId::generate().node_no() == kNode);
  CHECK(generate_on_new_thread(1).front().node_no() == kNode);
  CHECK(proxy.trace_id().node_no() == kNode);
}

TEST_CASE("generated trace ids carry the current unix time in seconds, wrapped to 25 bits", "[core][trace_id]") {
  const std::uint64_t before = unix_seconds();
  const TraceId id = TraceId::generate();
  const std::uint64_t after = unix_seconds();
  // The generator reads a coarse clock, which may lag the precise one by a tick.
  const std::uint64_t ts = id.timestamp();
  bool in_range = false;
  for (std::uint64_t s = before - 1; s <= after; ++s) in_range = in_range || ts == (s & TraceId::kTimestampMax);
  INFO("timestamp " << ts << ", now " << (after & TraceId::kTimestampMax));
  CHECK(in_range);
  CHECK(id.is_valid());
}

TEST_CASE("generated counters run from 1 to 1023, then a new chunk starts", "[core][trace_id]") {
  const auto ids = generate_on_new_thread(3 * 1023);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    REQUIRE(ids[i].is_valid());
    REQUIRE(ids[i].counter() == i % 1023 + 1);
    REQUIRE(ids[i].chunk_no() == ids[i - i % 1023].chunk_no());
  }
  CHECK(ids[0].chunk_no() != ids[1023].chunk_no());
  CHECK(ids[1023].chunk_no() != ids[2046].chunk_no());
}

TEST_CASE("trace ids generated on two threads at once are all different", "[core][trace_id]") {
  constexpr std::size_t kPerThread = 100'000;
  std::vector<TraceId> a;
  std::vector<TraceId> b;
  std::thread ta([&] {
    for (std::size_t i = 0; i < kPerThread; ++i) a.push_back(TraceId::generate());
  });
  std::thread tb([&] {
    for (std::size_t i = 0; i < kPerThread; ++i) b.push_back(TraceId::generate());
  });
  ta.join();
  tb.join();
  std::unordered_set<TraceId> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  CHECK(all.size() == 2 * kPerThread);
}

TEST_CASE("an actor sees the sender's trace id on the envelope and as its own after recv", "[core][trace_id]") {
  auto proxy = traced_proxy();
  const TraceId t = distinctive();
  proxy.set_trace_id(t);
  proxy.send(Keyed{1, {}, "report"});
  auto inbox = receive(proxy, 3);
  CHECK(inbox.seen.at("1:env") == t.raw());
  CHECK(inbox.seen.at("1:ctx") == t.raw());
  // What it sends while handling the message carries the id too.
  CHECK(inbox.envelope.at("1:env") == t);
  CHECK(inbox.envelope.at("1:ctx") == t);
}

TEST_CASE("an actor's sends carry the trace id of the message it handles onward", "[core][trace_id]") {
  auto proxy = traced_proxy();
  const TraceId t = distinctive();
  proxy.set_trace_id(t);
  proxy.send(Keyed{1, {2}, "forward"});
  auto inbox = receive(proxy, 6);  // initial, env, ctx from both
  CHECK(inbox.seen.at("2:env") == t.raw());
  CHECK(inbox.seen.at("2:ctx") == t.raw());
  CHECK(inbox.envelope.at("2:env") == t);
}

TEST_CASE("set_trace_id changes the id an actor's next sends carry", "[core][trace_id]") {
  auto proxy = traced_proxy();
  const TraceId t = distinctive();
  proxy.set_trace_id(t);
  proxy.send(Keyed{1, {2}, "renew_and_forward"});
  auto inbox = receive(proxy, 6);
  const std::uint64_t renewed = inbox.seen.at("1:ctx");
  CHECK(inbox.seen.at("1:env") == t.raw());
  CHECK(renewed != t.raw());
  CHECK(TraceId{renewed}.is_valid());
  CHECK(inbox.seen.at("2:env") == renewed);
}

TEST_CASE("a request carries the requester's trace id to the responder and the response brings it back",
          "[core][trace_id]") {
  auto proxy = traced_proxy();
  const TraceId t = distinctive();
  proxy.set_trace_id(t);
  proxy.send(Ask{"any", 5, {}, ""});
  auto inbox = receive(proxy, 3);  // 0:initial, 5:initial, Answers
  REQUIRE(inbox.answers.size() == 1);
  CHECK(inbox.answers[0].results == std::vector<std::string>{"ok:" + std::to_string(t.raw())});
  CHECK(inbox.answers[0].trace == t.raw());  // the responder's own new id did not leak back

  const TraceId t2 = TraceId::compose(654'321, kNode, 4001, 88);
  proxy.set_trace_id(t2);
  CHECK(proxy.request(Question{5, {}, ""}) == std::to_string(t2.raw()));
  CHECK(proxy.trace_id() == t2);
}

TEST_CASE("a new actor starts with a fresh valid trace id of its own", "[core][trace_id]") {
  auto proxy = traced_proxy();
  const TraceId t = distinctive();
  proxy.set_trace_id(t);
  proxy.send(Keyed{1, {}, "report"});
  proxy.set_trace_id(t);
  proxy.send(Keyed{2, {}, "report"});
  auto inbox = receive(proxy, 6);
  const TraceId first{inbox.seen.at("1:initial")};
  const TraceId second{inbox.seen.at("2:initial")};
  CHECK(first.is_valid());
  CHECK(second.is_valid());
  CHECK(first != t);
  CHECK(second != t);
  CHECK(first != second);
  CHECK(first.node_no() == kNode);
  CHECK(inbox.envelope.at("1:initial") == first);
}
