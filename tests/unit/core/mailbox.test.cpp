// Mailboxes: per-sender FIFO under thread migration, bounded sends that wait, and the errors of
// the non-waiting sends (Full, Closed, NoRoute, UnknownAddr).
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

// --- per-sender FIFO ---------------------------------------------------------------------------
// Key 0 consumes; keys 1..kSenders each send kPerSender numbered messages to it, yielding every
// few sends so the scheduler moves them between workers.

constexpr std::uint32_t kSenders = 4;
constexpr std::uint64_t kPerSender = 20'000;
constexpr std::uint64_t kYieldEvery = 8;

Outcome<Key> route_fifo(const Envelope& e) {
  if (e.is<Start>()) return Outcome<Key>::Multicast({1, 2, 3, 4});
  if (e.is<Numbered>() || e.is<SenderDone>() || e.is<GetFifoReport>()) return Outcome<Key>::Unicast(0);
  return Outcome<Key>::Default();
}

Task<> fifo_consumer(Context<NoConfig, Key> ctx) {
  std::vector<std::uint64_t> next(kSenders + 1, 0);
  FifoReport report;
  report.per_sender.assign(kSenders, 0);
  report.threads.assign(kSenders, 0);
  std::uint32_t done = 0;
  std::optional<ResponseToken<GetFifoReport>> waiting;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const Numbered& m) {
          ++report.received;
          if (m.sender < 1 || m.sender > kSenders) {
            ++report.out_of_order;
            return;
          }
          if (m.seq != next[m.sender]) ++report.out_of_order;
          next[m.sender] = m.seq + 1;
          ++report.per_sender[m.sender - 1];
        },
        [&](const SenderDone& m) {
          if (m.sender >= 1 && m.sender <= kSenders) report.threads[m.sender - 1] = m.threads;
          ++done;
        },
        [&](const GetFifoReport&, ResponseToken<GetFifoReport> token) { waiting = std::move(token); });
    if (waiting && done == kSenders) {
      ctx.respond(std::move(*waiting), report);
      waiting.reset();
    }
  }
}

Task<> fifo_sender(Context<NoConfig, Key> ctx) {
  const auto me = static_cast<std::uint32_t>(ctx.key());
  for (;;) {  // the Start that spawned us
    auto envelope = co_await ctx.recv();
    if (!envelope) co_return;
    if (envelope->is<Start>()) break;
  }
  std::set<std::thread::id> threads;
  for (std::uint64_t seq = 0; seq < kPerSender; ++seq) {
    threads.insert(std::this_thread::get_id());
    Numbered numbered{me, seq};
    auto sent = co_await ctx.send_to(ctx.group_addr(), std::move(numbered));
    if (!sent) break;  // the consumer's count shows the gap
    if (seq % kYieldEvery == kYieldEvery - 1) co_await ctx.yield_now();
  }
  threads.insert(std::this_thread::get_id());
  SenderDone done{me, kPerSender, threads.size()};
  std::ignore = co_await ctx.send_to(ctx.group_addr(), std::move(done));
  while (auto envelope = co_await ctx.recv()) {
  }
}

Blueprint fifo_group() {
  return ActorGroup().router(MapRouter<Key>(route_fifo)).exec([](Context<NoConfig, Key> ctx) {
    return ctx.key() == 0 ? fifo_consumer(std::move(ctx)) : fifo_sender(std::move(ctx));
  });
}

// --- a consumer that waits for the test, a producer and a prober ------------------------------
// Key 0 is "gated": it takes the message that started it, then asks the test (a Gate request)
// what to do: "go" handles messages (reporting each), "close" closes its mailbox and asks again,
// "exit" returns at once. Key 1 produces on Produce; key 2 answers Probe with a try_send result.

constexpr Key kGated = 0;
constexpr Key kProducer = 1;
constexpr Key kProber = 2;

Outcome<Key> route_pair(const Envelope& e) {
  if (const auto* k = e.get<Keyed>()) {
    if (k->mode == "discard") return Outcome<Key>::Discard();
    if (k->mode == "gentle") return Outcome<Key>::GentleUnicast(k->key);
    return Outcome<Key>::Unicast(k->key);
  }
  if (e.is<Numbered>()) return Outcome<Key>::Unicast(kGated);
  if (e.is<Produce>()) return Outcome<Key>::Unicast(kProducer);
  if (e.is<Probe>()) return Outcome<Key>::Unicast(kProber);
  return Outcome<Key>::Default();
}

Task<> gated(Context<NoConfig, Key> ctx) {
  std::ignore = co_await ctx.recv();  // whatever started us
  Gate first{"first"};
  auto answer = co_await ctx.request(std::move(first));
  while (answer && answer.value() == "close") {
    ctx.close();
    Gate closed{"closed"};
    answer = co_await ctx.request(std::move(closed));
  }
  if (!answer || answer.value() == "exit") co_return;
  while (auto envelope = co_await ctx.recv()) {
    Seen seen;
    co_await handle(
        *envelope, [&](const Numbered& m) { seen = Seen{m.seq, "numbered"}; },
        [&](const Keyed& m) { seen = Seen{m.key, "keyed:" + m.mode}; },
        [&](const Envelope& other) { seen = Seen{0, std::string(other.name())}; });
    std::ignore = ctx.unbounded_send(seen);
  }
  std::ignore = ctx.unbounded_send(Seen{0, "end"});
}

Task<> producer(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    const auto* produce = envelope->get<Produce>();
    if (produce == nullptr) continue;
    for (std::uint64_t i = 0; i < produce->count; ++i) {
      std::ignore = ctx.unbounded_send(Seen{i, "attempt"});
      Numbered numbered{1, i};
      auto sent = co_await ctx.send_to(ctx.group_addr(), std::move(numbered));
      std::ignore = ctx.unbounded_send(Seen{i, sent ? "sent" : "failed:" + name_of(sent.error().kind())});
    }
  }
}

Task<> prober(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const Probe& p, ResponseToken<Probe> token) {
      Keyed payload{p.key, {}, p.mode};
      Result<void, SendError<Keyed>> result;
      if (p.mode == "unbounded") {
        result = ctx.unbounded_send_to(Addr{p.to}, payload);
      } else if (p.to == 0) {
        result = ctx.try_send(payload);
      } else {
        result = ctx.try_send_to(Addr{p.to}, payload);
      }
      ctx.respond(std::move(token), name_of(result));
    });
  }
}

Blueprint pair_group() {
  return ActorGroup().router(MapRouter<Key>(route_pair)).mailbox_capacity(1).exec([](Context<NoConfig, Key> ctx) {
    switch (ctx.key()) {
      case kGated:
        return gated(std::move(ctx));
      case kProducer:
        return producer(std::move(ctx));
      default:
        return prober(std::move(ctx));
    }
  });
}

// --- a consumer the test steps one message at a time ---------------------------------------------
// The pair group's actors with a capacity of 10, where key 0 asks the test (a Gate request) before
// each message it takes: the test decides when every slot frees.

constexpr std::size_t kSteppedCapacity = 10;

Task<> stepped(Context<NoConfig, Key> ctx) {
  std::ignore = co_await ctx.recv();  // whatever started us
  for (;;) {
    Gate next{"next"};
    auto answer = co_await ctx.request(std::move(next));
    if (!answer || answer.value() != "go") co_return;
    auto envelope = co_await ctx.recv();
    if (!envelope) co_return;
    const auto* numbered = envelope->get<Numbered>();
    std::ignore = ctx.unbounded_send(Seen{numbered != nullptr ? numbered->seq : 0, numbered ? "numbered" : "other"});
  }
}

Blueprint stepped_group() {
  return ActorGroup()
      .router(MapRouter<Key>(route_pair))
      .mailbox_capacity(kSteppedCapacity)
      .exec([](Context<NoConfig, Key> ctx) {
        switch (ctx.key()) {
          case kGated:
            return stepped(std::move(ctx));
          case kProducer:
            return producer(std::move(ctx));
          default:
            return prober(std::move(ctx));
        }
      });
}

/// Takes the proxy's envelopes, Seen ones as "key:what" lines into `seen`, until a Gate request
/// came and `line` is among the lines (any line if empty); returns the Gate's token.
ResponseToken<Gate> collect_until(testing::Proxy& proxy, std::vector<std::string>& seen, const std::string& line,
                                  Addr* from = nullptr) {
  std::optional<ResponseToken<Gate>> token;
  auto has_line = [&] { return line.empty() || std::find(seen.begin(), seen.end(), line) != seen.end(); };
  while (!token || !has_line()) {
    Envelope envelope = proxy.recv();
    if (const Seen* s = envelope.get<Seen>()) {
      seen.push_back(fmt::format("{}:{}", s->key, s->what));
      continue;
    }
    if (envelope.get<Gate>() == nullptr) FAIL("expected Seen or Gate, got " << envelope.name());
    if (token) FAIL("a second Gate before the first was answered");
    if (from != nullptr) *from = envelope.sender();
    token = envelope.take_token<Gate>();
  }
  return std::move(*token);
}

/// Starts the gated consumer and returns the token that holds it, with its address.
ResponseToken<Gate> hold_consumer(testing::Proxy& proxy, Addr& consumer) {
  proxy.send(Keyed{kGated, {}, "hold"});
  return expect_gate(proxy, &consumer);
}

std::string probe(testing::Proxy& proxy, Addr to, std::string mode = "unicast", Key key = kGated) {
  return proxy.request(Probe{to.raw(), key, std::move(mode)});
}

}  // namespace

TEST_CASE("each sender's messages arrive in order even when the senders hop between threads", "[core][mailbox]") {
  auto proxy =
      testing::proxy(fifo_group(), {}, testing::ProxyOptions{.timeout = std::chrono::seconds(60), .workers = 4});
  proxy.send(Start{});
  const FifoReport report = proxy.request(GetFifoReport{});

  CHECK(report.out_of_order == 0);
  CHECK(report.received == kSenders * kPerSender);
  CHECK(report.per_sender == std::vector<std::uint64_t>(kSenders, kPerSender));
  // The property is only interesting if senders did migrate: at least one of them resumed on
  // more than one worker thread.
  INFO("distinct threads per sender: " << fmt::format("{}", fmt::join(report.threads, ", ")));
  CHECK(*std::max_element(report.threads.begin(), report.threads.end()) >= 2);
}

TEST_CASE("a bounded send to a full mailbox suspends the sender until a slot frees, losing nothing",
          "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  Addr consumer;
  auto gate = hold_consumer(proxy, consumer);

  constexpr std::uint64_t kCount = 5;
  proxy.send(Produce{kCount});
  // The first send fits (capacity 1); the second finds the mailbox full and waits.
  CHECK(recv_seen(proxy, 3) == std::vector<std::string>{"0:attempt", "0:sent", "1:attempt"});
  CHECK(drain_seen(proxy).empty());
  CHECK(name_of(proxy.try_send_to(consumer, Numbered{9, 9})) == "Full");

  std::move(gate).respond("go");
  std::vector<std::string> produced;
  std::vector<std::string> consumed;
  for (const auto& line : recv_seen(proxy, 2 * kCount - 3 + kCount)) {
    (line.ends_with(":numbered") ? consumed : produced).push_back(line);
  }
  CHECK(produced ==
        std::vector<std::string>{"1:sent", "2:attempt", "2:sent", "3:attempt", "3:sent", "4:attempt", "4:sent"});
  CHECK(consumed == std::vector<std::string>{"0:numbered", "1:numbered", "2:numbered", "3:numbered", "4:numbered"});
}

TEST_CASE("a sender waiting on a full mailbox is woken once half of it is free, then refills it in one go",
          "[core][mailbox]") {
  auto proxy = testing::proxy(stepped_group());
  std::vector<std::string> seen;
  Addr consumer;
  proxy.send(Keyed{kGated, {}, "hold"});
  auto gate = collect_until(proxy, seen, "", &consumer);

  // Messages 0-9 fill the mailbox; the producer waits at message 10.
  proxy.send(Produce{20});
  std::vector<std::string> produced = recv_seen(proxy, 21);
  CHECK(produced.back() == "10:attempt");
  CHECK(std::count(produced.begin(), produced.end(), "9:sent") == 1);

  // One message taken (9 left): the waiting sender is not woken for one slot, so the slot is still
  // free for the prober's message a round trip later.
  std::move(gate).respond("go");
  gate = collect_until(proxy, seen, "0:numbered");
  CHECK(probe(proxy, consumer, "unicast", kGated) == "ok");
  CHECK(std::find(seen.begin(), seen.end(), "10:sent") == seen.end());
  CHECK(drain_seen(proxy).empty());

  // Full again (the probe's message); five more taken leave five, half the capacity: the producer
  // is woken and fills the five free slots in one run, waiting again at message 15.
  for (int i = 0; i < 4; ++i) {
    std::move(gate).respond("go");
    gate = collect_until(proxy, seen, fmt::format("{}:numbered", i + 1));
    CHECK(std::find(seen.begin(), seen.end(), "10:sent") == seen.end());
  }
  std::move(gate).respond("go");
  gate = collect_until(proxy, seen, "15:attempt");
  std::vector<std::string> refill;
  for (const auto& l : seen) {
    if (!l.ends_with(":numbered")) refill.push_back(l);
  }
  CHECK(refill == std::vector<std::string>{"10:sent", "11:attempt", "11:sent", "12:attempt", "12:sent", "13:attempt",
                                           "13:sent", "14:attempt", "14:sent", "15:attempt"});
  CHECK(probe(proxy, consumer, "unicast", kGated) == "Full");
  std::move(gate).respond("exit");
}

TEST_CASE("try_send to a full mailbox fails with Full instead of waiting", "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  Addr consumer;
  auto gate = hold_consumer(proxy, consumer);
  proxy.send_to(consumer, Numbered{0, 0});  // capacity 1: now full

  CHECK(probe(proxy, consumer) == "Full");
  CHECK(probe(proxy, proxy.subject_addr()) == "Full");  // through the group's router
  CHECK(name_of(proxy.try_send_to(consumer, Numbered{0, 1})) == "Full");

  std::move(gate).respond("go");
  CHECK(recv_seen(proxy, 1) == std::vector<std::string>{"0:numbered"});  // the rejected ones never arrive
  proxy.sync();
  CHECK(drain_seen(proxy).empty());
}

TEST_CASE("unbounded_send delivers past a full mailbox's capacity", "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  Addr consumer;
  auto gate = hold_consumer(proxy, consumer);
  proxy.send_to(consumer, Numbered{0, 0});

  CHECK(probe(proxy, consumer, "unbounded") == "ok");
  CHECK(name_of(proxy.unbounded_send(Keyed{kGated, {}, "more"})) == "ok");

  std::move(gate).respond("go");
  CHECK(recv_seen(proxy, 3) == std::vector<std::string>{"0:numbered", "0:keyed:unbounded", "0:keyed:more"});
}

TEST_CASE("try_send to an actor that closed its mailbox fails with Closed while the actor lives on",
          "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  Addr consumer;
  auto gate = hold_consumer(proxy, consumer);
  std::move(gate).respond("close");
  std::string what;
  auto second = expect_gate(proxy, nullptr, &what);  // alive, mailbox closed
  REQUIRE(what == "closed");

  CHECK(probe(proxy, consumer) == "Closed");
  CHECK(probe(proxy, proxy.subject_addr()) == "Closed");  // the router picks it, its mailbox refuses
  CHECK(name_of(proxy.try_send_to(consumer, Numbered{0, 0})) == "Closed");
  CHECK(proxy.request_fallible(Question{}, consumer).error() == RequestError::Failed);

  std::move(second).respond("go");
  CHECK(recv_seen(proxy, 1) == std::vector<std::string>{"0:end"});  // nothing was queued after all
}

TEST_CASE("try_send to an actor that has finished fails with Closed", "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  CHECK(probe(proxy, Addr{}, "warm-up", kProber) == "ok");  // the prober exists (routed try_send: to the proxy)
  std::ignore = proxy.recv();                               // (that Keyed reached the proxy)
  Addr consumer;
  auto gate = hold_consumer(proxy, consumer);
  const auto live = proxy.system().active_actors();
  std::move(gate).respond("exit");
  REQUIRE(eventually([&] { return proxy.system().active_actors() == live - 1; }));

  CHECK(probe(proxy, consumer) == "Closed");
  CHECK(name_of(proxy.try_send_to(consumer, Numbered{0, 0})) == "Closed");
  // Through the router, a gentle unicast finds no actor with that key any more.
  CHECK(probe(proxy, proxy.subject_addr(), "gentle") == "NoRoute");
}

TEST_CASE("try_send_to an address of a group that does not exist fails with UnknownAddr", "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  const Addr subject = proxy.subject_addr();
  CHECK(probe(proxy, Addr::group(subject.node_no(), 200)) == "UnknownAddr");
  CHECK(probe(proxy, Addr::make(subject.node_no(), 200, 0, 3)) == "UnknownAddr");
  CHECK(probe(proxy, Addr::group(static_cast<std::uint16_t>(subject.node_no() + 7), subject.group_no())) ==
        "UnknownAddr");
  CHECK(name_of(proxy.try_send_to(Addr::group(subject.node_no(), 200), Numbered{})) == "UnknownAddr");
}

TEST_CASE("try_send_to a group whose router picks nobody fails with NoRoute", "[core][mailbox]") {
  auto proxy = testing::proxy(pair_group());
  CHECK(probe(proxy, proxy.subject_addr(), "discard", 5) == "NoRoute");
  CHECK(probe(proxy, proxy.subject_addr(), "gentle", 77) == "NoRoute");  // no actor 77, and gentle never starts one
  CHECK(name_of(proxy.try_send(Keyed{5, {}, "discard"})) == "NoRoute");
}
