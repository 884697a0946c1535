// A Caller's messages to another node leave from the calling thread (the forwarders' DirectSink):
// the sending node's only worker is held busy throughout, so nothing that needs a worker there (a
// forwarder) can carry them — yet requests are answered, one thread's messages arrive in order
// while the flow's credit runs out and comes back, and what cannot be carried fails as a
// forwarder fails it.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <elfin/caller.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>

#include "../eventually.hpp"
#include "network_test_config.hpp"

// Named: the test binary is a unity build, and the light node's tests use the same short names.
namespace direct_send_test {
namespace {

using namespace std::chrono_literals;
using elfin::RequestError;
using elfin::test::eventually;

struct Double {
  std::uint64_t value = 0;
  ELFIN_REQUEST(direct_test, Double, std::uint64_t, value);
};
/// Answered with the raw address of the actor that handles it.
struct WhoAreYou {
  ELFIN_REQUEST(direct_test, WhoAreYou, std::uint64_t);
};
struct Seq {
  std::uint64_t n = 0;
  ELFIN_MESSAGE(direct_test, Seq, n);
};
struct SeqReport {
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  MSGPACK_DEFINE_MAP(received, out_of_order)
};
struct GetSeqReport {
  ELFIN_REQUEST(direct_test, GetSeqReport, SeqReport);
};
/// Makes the actor that gets it block its worker until `Blocker::release`.
struct Block {
  ELFIN_MESSAGE(direct_test, Block);
};

/// Holds the thread of whichever actor handles Block (made afresh by each Pair).
struct Blocker {
  std::promise<void> released;
  std::shared_future<void> wait = released.get_future().share();
  std::atomic<bool> holding{false};
  std::atomic<bool> done{false};

  void hold() {
    holding = true;
    wait.wait();
  }
  void release() {
    if (!done.exchange(true)) released.set_value();
  }
};
std::optional<Blocker> g_sender_worker;
std::optional<Blocker> g_receiver;

elfin::Task<> service(elfin::Context<> ctx) {
  SeqReport report;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* d = envelope->get<Double>()) {
      ctx.respond(envelope->take_token<Double>(), d->value * 2);
    } else if (envelope->is<WhoAreYou>()) {
      ctx.respond(envelope->take_token<WhoAreYou>(), ctx.addr().raw());
    } else if (const auto* s = envelope->get<Seq>()) {
      if (s->n != report.received) ++report.out_of_order;
      ++report.received;
    } else if (envelope->is<GetSeqReport>()) {
      ctx.respond(envelope->take_token<GetSeqReport>(), report);
    } else if (envelope->is<Block>()) {
      g_receiver->hold();
    }
  }
}

/// Stands in for the telemeter: a `system.telemeters` group turns telemetry (and the network's
/// series) on.
elfin::Task<> idle(elfin::Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

elfin::Task<> hog(elfin::Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Block>()) g_sender_worker->hold();
  }
}

elfin::System start(elfin::Topology topology, std::uint16_t node, unsigned workers, std::string config) {
  elfin::StartOptions start;
  start.node_no = node;
  start.workers = workers;
  start.config_toml = std::move(config);
  auto started = elfin::System::start(std::move(topology), std::move(start));
  REQUIRE(started);
  return std::move(*started);
}

elfin::network::NetworkInfo network_info(elfin::System& system, elfin::Caller& caller) {
  auto info = caller.request_to(system.group_addr("system.network"), elfin::network::GetNetworkInfo{}, 10s).get();
  REQUIRE(info);
  return *info;
}

/// Node 1 with the group `service`, and node 2 with one worker, a hog for it, and remote groups
/// on node 1: `far` (node 1's `service`), `nowhere` (a group node 1 does not have) and `picky`
/// (which picks node 7, never connected).
struct Pair {
  std::optional<elfin::System> receiver;
  std::optional<elfin::System> sender;
  std::optional<elfin::Caller> caller;

  Pair() {
    g_sender_worker.emplace();
    g_receiver.emplace();
    elfin::Topology one;
    one.local("system.network").mount(elfin::network::blueprint());
    one.local(std::string(elfin::Caller::kGroup)).mount(elfin::Caller::blueprint());
    one.local("service").mount(elfin::ActorGroup().exec(service));
    one.local("system.telemeters").mount(elfin::ActorGroup().exec(idle));
    receiver.emplace(start(std::move(one), 1, 2, elfin::network::test::network_config("127.0.0.1:0", {})));
    auto receiver_caller = elfin::Caller::attach(*receiver);
    REQUIRE(receiver_caller);
    const auto listening = network_info(*receiver, *receiver_caller).listening;
    REQUIRE(listening.size() == 1);

    elfin::Topology two;
    two.local("system.network").mount(elfin::network::blueprint());
    two.local(std::string(elfin::Caller::kGroup)).mount(elfin::Caller::blueprint());
    two.local("hog").mount(elfin::ActorGroup().exec(hog));
    two.local("system.telemeters").mount(elfin::ActorGroup().exec(idle));
    two.local("far").mount(elfin::network::remote_group({.nodes = {1}, .remote_name = "service"}));
    two.local("nowhere").mount(elfin::network::remote_group({.nodes = {1}, .remote_name = "no_such_group"}));
    two.local("picky").mount(elfin::network::remote_group(
        {.nodes = {1}, .remote_name = "service", .pick = [](const elfin::Envelope&, const auto&) {
           return std::optional<std::uint16_t>{7};
         }}));
    sender.emplace(start(std::move(two), 2, 1, elfin::network::test::network_config("127.0.0.1:0", listening)));
    caller.emplace(*elfin::Caller::attach(*sender));
    REQUIRE(eventually([&] { return !network_info(*sender, *caller).peers.empty(); }, 10s, 10ms));

    // From here on no actor of node 2 runs until the test releases the hog.
    REQUIRE(caller->send_to(sender->group_addr("hog"), Block{}));
    REQUIRE(eventually([] { return g_sender_worker->holding.load(); }));
  }
  ~Pair() {
    g_sender_worker->release();
    g_receiver->release();
    caller.reset();
    for (auto* system : {&sender, &receiver}) {
      (*system)->terminate("test over");
      (*system)->join();
      system->reset();
    }
  }
  [[nodiscard]] elfin::Addr far() const { return sender->group_addr("far"); }
  /// Node 2's `elfin_network_writes_total` for node 1.
  [[nodiscard]] double writes() const { return peer_metric(*sender, "elfin_network_writes_total", "1"); }
  /// Node 1's `name` for node 2.
  [[nodiscard]] double receiver_metric(const std::string& name) const { return peer_metric(*receiver, name, "2"); }
  [[nodiscard]] static double peer_metric(const elfin::System& system, const std::string& name,
                                          const std::string& peer) {
    const std::vector<std::pair<std::string, std::string>> labels{{"actor_group", "system.network"}, {"peer", peer}};
    for (const auto& sample : system.scrape_metrics()) {
      if (sample.name == name && sample.labels == labels) return sample.value;
    }
    return -1;
  }
};

}  // namespace

TEST_CASE("a Caller's request to another node leaves from the calling thread, with every worker of its node busy",
          "[network][light][direct]") {
  Pair pair;
  auto doubled = pair.caller->request_to(pair.far(), Double{21}, 5s).get();
  INFO((doubled ? std::string("ok") : to_string(doubled.error())));
  REQUIRE(doubled);
  CHECK(*doubled == 42);

  // To an actor's own address there: through system.network's direct forwarder for node 1.
  auto who = pair.caller->request_to(pair.far(), WhoAreYou{}, 5s).get();
  REQUIRE(who);
  const elfin::Addr actor{*who};
  CHECK(actor.node_no() == 1);
  auto again = pair.caller->request_to(actor, Double{4}, 5s).get();
  REQUIRE(again);
  CHECK(*again == 8);
  CHECK(pair.caller->outstanding() == 0);
}

TEST_CASE("one thread's messages to another node arrive in order while the flow's credit runs out and comes back",
          "[network][light][direct]") {
  Pair pair;
  auto& caller = *pair.caller;
  // The receiver's actor stops taking messages: the credit it returns stops with its mailbox
  // (acknowledged as they land there, half a window at a time), well short of a window.
  REQUIRE(caller.send_to(pair.far(), Block{}));
  REQUIRE(eventually([] { return g_receiver->holding.load(); }));
  constexpr std::uint64_t kMessages = std::uint64_t{3} * elfin::network::kFlowWindow;
  std::uint64_t n = 0;
  for (; n + 1 < elfin::network::kFlowWindow; ++n) REQUIRE(caller.send_to(pair.far(), Seq{n}, 5s));
  // The window is spent (the Block took a credit too): with no credit nothing more leaves.
  auto refused = caller.try_send_to(pair.far(), Seq{n});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind() == elfin::SendErrorKind::Full);
  CHECK(refused.error().message().n == n);

  g_receiver->release();
  for (; n < kMessages; ++n) REQUIRE(caller.send_to(pair.far(), Seq{n}, 10s));
  auto report = caller.request_to(pair.far(), GetSeqReport{}, 10s).get();
  REQUIRE(report);
  CHECK(report->received == kMessages);
  CHECK(report->out_of_order == 0);
}

TEST_CASE("Callers waiting together for credit on a connection all go on once it comes back",
          "[network][light][direct]") {
  Pair pair;
  auto& first = *pair.caller;
  auto second = elfin::Caller::attach(*pair.sender);
  REQUIRE(second);
  // Every Caller's messages to node 1 share one flow: the first caller spends its window while
  // the receiver holds (the Block took a credit too).
  REQUIRE(first.send_to(pair.far(), Block{}));
  REQUIRE(eventually([] { return g_receiver->holding.load(); }));
  for (std::uint64_t n = 0; n + 1 < elfin::network::kFlowWindow; ++n) REQUIRE(first.send_to(pair.far(), Seq{n}, 5s));
  REQUIRE_FALSE(second->try_send_to(pair.far(), Seq{0}));

  // Both callers now wait for credit, each for far less than its timeout.
  constexpr auto kTimeout = 120s;
  auto a = std::async(std::launch::async, [&] { return first.request_to(pair.far(), Double{1}, kTimeout).get(); });
  auto b = std::async(std::launch::async, [&] { return second->request_to(pair.far(), Double{2}, kTimeout).get(); });
  REQUIRE(eventually([&] { return first.outstanding() == 1 && second->outstanding() == 1; }));
  g_receiver->release();
  // Woken by the credit, not by their deadlines: a caller left parked would answer after 120 s.
  REQUIRE(a.wait_for(30s) == std::future_status::ready);
  REQUIRE(b.wait_for(30s) == std::future_status::ready);
  auto doubled_a = a.get();
  auto doubled_b = b.get();
  REQUIRE(doubled_a);
  REQUIRE(doubled_b);
  CHECK(*doubled_a == 2);
  CHECK(*doubled_b == 4);
}

TEST_CASE("a Caller's requests sent while its others wait for answers share writes instead of one each",
          "[network][light][direct]") {
  Pair pair;
  auto& caller = *pair.caller;
  // The receiver's actor holds every request, so each one after the first is sent while the
  // caller's earlier ones are outstanding.
  REQUIRE(caller.send_to(pair.far(), Block{}));
  REQUIRE(eventually([] { return g_receiver->holding.load(); }));
  const double before = pair.writes();
  REQUIRE(before > 0);  // the handshake, the Block
  constexpr std::uint64_t kRequests = 64;
  std::vector<std::future<elfin::Answer<std::uint64_t>>> answers;
  answers.reserve(kRequests);
  for (std::uint64_t i = 0; i < kRequests; ++i) answers.push_back(caller.request_to(pair.far(), Double{i}, 10s));
  CHECK(caller.outstanding() == kRequests);
  g_receiver->release();
  for (std::uint64_t i = 0; i < kRequests; ++i) {
    auto answer = answers[i].get();
    REQUIRE(answer);
    CHECK(*answer == 2 * i);
  }
  // The first went out at once from this thread; the rest joined the connection's queue for its
  // I/O thread, which writes all it holds at once. One `send` per request (what a caller alone
  // gets) would make at least kRequests writes; pings add one a second at most.
  const double writes = pair.writes() - before;
  INFO("writes for " << kRequests << " requests: " << writes);
  CHECK(writes < static_cast<double>(kRequests));
}

TEST_CASE("an actor's answers to another node's requests leave together when its run ends, not one write each",
          "[network][light][direct]") {
  Pair pair;
  auto& caller = *pair.caller;
  // The receiving actor holds while the requests pile up in its mailbox; released, it answers
  // them in a few runs (its budget a run), each run's answers written together at the run's end.
  REQUIRE(caller.send_to(pair.far(), Block{}));
  REQUIRE(eventually([] { return g_receiver->holding.load(); }));
  constexpr std::uint64_t kRequests = 64;
  const double received = pair.receiver_metric("elfin_network_received_messages_total");
  std::vector<std::future<elfin::Answer<std::uint64_t>>> answers;
  answers.reserve(kRequests);
  for (std::uint64_t i = 0; i < kRequests; ++i) answers.push_back(caller.request_to(pair.far(), Double{i}, 10s));
  REQUIRE(eventually(
      [&] { return pair.receiver_metric("elfin_network_received_messages_total") >= received + kRequests; }));
  const double before = pair.receiver_metric("elfin_network_writes_total");
  REQUIRE(before > 0);  // the handshake
  g_receiver->release();
  for (std::uint64_t i = 0; i < kRequests; ++i) {
    auto answer = answers[i].get();
    REQUIRE(answer);
    CHECK(*answer == 2 * i);
  }
  // One write an answer would be kRequests; credit for the requests and pings add a few.
  const double writes = pair.receiver_metric("elfin_network_writes_total") - before;
  INFO("writes for " << kRequests << " answers: " << writes);
  CHECK(writes <= static_cast<double>(kRequests) / 4);
}

TEST_CASE("what a Caller's thread cannot carry to another node fails with the forwarder's error",
          "[network][light][direct]") {
  Pair pair;
  SECTION("a node that is not connected") {
    auto answer = pair.caller->request_to(pair.sender->group_addr("picky"), Double{1}, 5s).get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::Failed);
    CHECK(answer.error().reason() == "node 7: the node is not connected");
  }
  SECTION("a group the node does not have") {
    auto answer = pair.caller->request_to(pair.sender->group_addr("nowhere"), Double{1}, 5s).get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::Failed);
    CHECK(answer.error().reason() == "node 1: node 1 has no group `no_such_group`");
  }
  // Still connected, and carrying.
  auto doubled = pair.caller->request_to(pair.far(), Double{2}, 5s).get();
  REQUIRE(doubled);
  CHECK(*doubled == 4);
}

}  // namespace direct_send_test
