// elfin::Caller in one local system: plain threads sending and requesting, a full mailbox making
// them wait (up to their timeout), deadlines, and a system without the callers' group.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <elfin/caller.hpp>
#include <elfin/elfin.hpp>

namespace {

using namespace std::chrono_literals;
using elfin::RequestError;

struct Add {
  std::uint64_t by = 1;
  ELFIN_MESSAGE(caller_test, Add, by);
};
struct Total {
  ELFIN_REQUEST(caller_test, Total, std::uint64_t);
};
/// The actor stays in this handler while `g_closed` is set (its mailbox fills meanwhile).
struct Hold {
  ELFIN_MESSAGE(caller_test, Hold);
};
std::atomic<bool> g_closed{false};
std::atomic<bool> g_holding{false};

elfin::Task<> summer(elfin::Context<> ctx) {
  std::uint64_t total = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* add = envelope->get<Add>()) {
      total += add->by;
    } else if (envelope->is<Total>()) {
      ctx.respond(envelope->take_token<Total>(), total);
    } else if (envelope->is<Hold>()) {
      g_holding = true;
      while (g_closed.load()) co_await ctx.yield_now();
      g_holding = false;
    }
  }
}

struct Local {
  std::optional<elfin::System> system;
  std::optional<elfin::Caller> caller;
  elfin::Addr summers;

  explicit Local(std::size_t capacity = 100) {
    elfin::Topology topology;
    topology.local(std::string(elfin::Caller::kGroup)).mount(elfin::Caller::blueprint());
    topology.local("summers").mount(elfin::ActorGroup().mailbox_capacity(capacity).exec(summer));
    elfin::StartOptions start;
    start.workers = 2;
    auto started = elfin::System::start(std::move(topology), std::move(start));
    REQUIRE(started);
    system.emplace(std::move(*started));
    auto attached = elfin::Caller::attach(*system);
    REQUIRE(attached);
    caller.emplace(std::move(*attached));
    summers = system->group_addr("summers");
  }
  ~Local() {
    g_closed = false;
    caller.reset();
    system->terminate();
    system->join();
  }
};

}  // namespace

TEST_CASE("caller: sends and requests from plain threads reach a local group", "[core][caller]") {
  Local local;
  constexpr std::uint64_t kThreads = 4;
  constexpr std::uint64_t kAdds = 250;
  std::atomic<std::uint64_t> refused{0};  // Catch2's assertions are for the test's thread only
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (std::uint64_t i = 0; i < kAdds; ++i) {
        if (!local.caller->send_to(local.summers, Add{1})) ++refused;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(refused == 0);
  auto total = local.caller->request_to(local.summers, Total{}, 5s).get();
  REQUIRE(total);
  CHECK(*total == kThreads * kAdds);
  CHECK(local.caller->outstanding() == 0);
}

TEST_CASE("caller: a send to a full mailbox waits for a slot, up to its timeout", "[core][caller]") {
  Local local(2);
  g_closed = true;
  CHECK(local.caller->send_to(local.summers, Hold{}));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!g_holding && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  REQUIRE(g_holding);
  CHECK(local.caller->send_to(local.summers, Add{1}));
  CHECK(local.caller->send_to(local.summers, Add{2}));

  SECTION("try_send gives Full and the message back") {
    auto full = local.caller->try_send_to(local.summers, Add{7});
    REQUIRE_FALSE(full);
    CHECK(full.error() == elfin::SendErrorKind::Full);
    CHECK(full.error().message().by == 7);
  }
  SECTION("send gives up after its timeout, with the message") {
    auto full = local.caller->send_to(local.summers, Add{7}, 50ms);
    REQUIRE_FALSE(full);
    CHECK(full.error() == elfin::SendErrorKind::Full);
    CHECK(full.error().message().by == 7);
  }
  SECTION("a request waiting for a slot past its deadline is answered TimedOut") {
    auto answer = local.caller->request_to(local.summers, Total{}, 50ms).get();
    REQUIRE_FALSE(answer);
    CHECK(answer.error() == RequestError::TimedOut);
  }
  SECTION("senders on several threads go once the actor takes messages again") {
    std::vector<std::thread> threads;
    std::atomic<int> sent{0};
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&] {
        if (local.caller->send_to(local.summers, Add{10}, 10s)) ++sent;
      });
    }
    g_closed = false;  // the actor leaves Hold and drains its mailbox
    for (auto& thread : threads) thread.join();
    CHECK(sent == 3);
    auto total = local.caller->request_to(local.summers, Total{}, 5s).get();
    REQUIRE(total);
    CHECK(*total == 33);
  }
  g_closed = false;
}

TEST_CASE("caller: attach fails without the callers' group", "[core][caller]") {
  elfin::Topology topology;
  topology.local("summers").mount(elfin::ActorGroup().exec(summer));
  elfin::StartOptions start;
  start.workers = 1;
  auto system = elfin::System::start(std::move(topology), std::move(start));
  REQUIRE(system);
  auto caller = elfin::Caller::attach(*system);
  REQUIRE_FALSE(caller);
  CHECK_THAT(caller.error(), Catch::Contains("system.callers"));
  system->terminate();
  system->join();
}
