// The block pool (elfin/detail/block_pool.hpp): a freed block is what the same thread allocates
// next in its size class, blocks freed on one thread serve another, envelope blocks come from it
// (over-aligned messages excepted), and an actor started in the memory of one that ended cannot be
// reached through the old actor's address.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/detail/block_pool.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;

// Under AddressSanitizer the pool is off (plain allocations): only the address checks apply.
#if defined(__SANITIZE_ADDRESS__)
#define ELFIN_TEST_POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ELFIN_TEST_POOL_OFF 1
#endif
#endif

#if !defined(ELFIN_TEST_POOL_OFF)
TEST_CASE("block pool: a block freed on a thread is the next one that thread allocates in its size class",
          "[core][block_pool]") {
  void* first = detail::allocate_block(800);
  detail::free_block(first, 800);
  // 790 and 832 bytes fall in the same 64-byte class as 800; 900 does not.
  void* other_class = detail::allocate_block(900);
  CHECK(other_class != first);
  void* again = detail::allocate_block(790);
  CHECK(again == first);
  detail::free_block(again, 790);
  CHECK(detail::allocate_block(832) == first);
  detail::free_block(first, 832);
  detail::free_block(other_class, 900);
}

TEST_CASE("block pool: blocks freed on one thread serve allocations on another", "[core][block_pool]") {
  // One thread allocates, another frees: the freeing thread's surplus goes to the shared depot,
  // from which the allocating thread takes it back.
  constexpr std::size_t kSize = 1500;  // a class no other test or actor of this binary uses
  constexpr int kBlocks = 512;
  std::vector<void*> blocks;
  blocks.reserve(kBlocks);
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(detail::allocate_block(kSize));
  std::thread([&] {
    for (void* b : blocks) detail::free_block(b, kSize);
  }).join();
  const std::set<void*> freed(blocks.begin(), blocks.end());
  int reused = 0;
  for (int i = 0; i < kBlocks; ++i) {
    void* b = detail::allocate_block(kSize);
    reused += freed.count(b) != 0 ? 1 : 0;
    blocks[static_cast<std::size_t>(i)] = b;
  }
  // The exiting thread gave back what it still held itself; the depot kept the rest.
  CHECK(reused >= kBlocks / 2);
  for (void* b : blocks) detail::free_block(b, kSize);
}

TEST_CASE("block pool: a message's envelope block is taken from this thread's pool and given back to it",
          "[core][block_pool]") {
  constexpr std::size_t kSize = sizeof(detail::TypedBlock<Numbered>);
  void* spare = detail::allocate_block(kSize);
  detail::free_block(spare, kSize);
  std::optional<Envelope> envelope = Envelope::make(Numbered{1, 2}, Addr{}, TraceId{});
  CHECK(static_cast<void*>(detail::EnvelopeAccess::block(*envelope)) == spare);
  envelope.reset();
  void* again = detail::allocate_block(kSize);
  CHECK(again == spare);
  detail::free_block(again, kSize);
}
#endif

namespace {
// Over-aligned: the pool's blocks are only aligned as operator new aligns.
struct alignas(64) WideMessage {
  std::uint64_t value = 0;
  ELFIN_MESSAGE(test, WideMessage, value);
};
}  // namespace

TEST_CASE("an over-aligned message keeps its alignment in its envelope", "[core][block_pool]") {
  std::vector<Envelope> envelopes;
  for (std::uint64_t i = 0; i < 16; ++i) {
    envelopes.push_back(Envelope::make(WideMessage{i}, Addr{}, TraceId{}));
    const WideMessage* message = envelopes.back().get<WideMessage>();
    REQUIRE(message != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(message) % alignof(WideMessage) == 0);
    CHECK(message->value == i);
  }
}

namespace {

using Key = std::uint64_t;
constexpr Key kHelper = 1000;

Outcome<Key> route_reuse(const Envelope& e) {
  if (const auto* q = e.get<Question>()) return Outcome<Key>::Unicast(q->key);
  if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key);
  if (e.is<Start>()) return Outcome<Key>::Unicast(0);
  return Outcome<Key>::Default();
}

struct Identity {
  Addr addr;
  std::uintptr_t cell = 0;
};

Identity parse_identity(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t addr = 0;
  Identity id;
  in >> addr >> id.cell;
  id.addr = Addr{addr};
  return id;
}

// Answers Question "who" with its address and the address of its cell, Question "count" with
// the number of Keyed "poke" it received; ends on Keyed "exit".
Task<> reuse_target(Context<NoConfig, Key> ctx) {
  std::uint64_t pokes = 0;
  while (auto envelope = co_await ctx.recv()) {
    bool exit = false;
    co_await handle(
        *envelope,
        [&](const Question& q, ResponseToken<Question> token) {
          const auto cell = reinterpret_cast<std::uintptr_t>(detail::ActorCellAccess::cell(ctx));
          ctx.respond(std::move(token),
                      q.mode == "who" ? fmt::format("{} {}", ctx.addr().raw(), cell) : std::to_string(pokes));
        },
        [&](const Keyed& k) {
          if (k.mode == "exit") exit = true;
          if (k.mode == "poke") ++pokes;
        });
    if (exit) co_return;
  }
}

// Key 0, on Start: learns key 1's address and cell, ends key 1 and waits until its address finds
// nothing, then starts keys 2, 3, ... until one lives in key 1's memory. It sends to key 1's old
// address and reports what the sends returned and what the new actor received.
Task<> reuse_checker(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<Start>()) continue;
    const Addr group = ctx.group_addr();
    std::ignore = co_await ctx.request_to(group, Question{kHelper, {}, "who"});
    auto old_text = co_await ctx.request_to(group, Question{1, {}, "who"});
    if (!old_text) {
      std::ignore = co_await ctx.send(Seen{0, "key 1 did not answer"});
      continue;
    }
    const Identity old = parse_identity(*old_text);
    std::ignore = co_await ctx.send_to(group, Keyed{1, {}, "exit"});
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    bool gone = false;
    while (!gone && std::chrono::steady_clock::now() < deadline) {
      gone = !co_await ctx.send_to(old.addr, Keyed{1, {}, "poke"});
      if (!gone) co_await ctx.yield_now();
    }
    // The sends above left key 1's cell in this actor's route cache; a lookup of another actor
    // replaces it, so the cell's last reference goes and its block returns to the pool.
    std::ignore = co_await ctx.request_to(group, Question{kHelper, {}, "count"});

    std::string report = gone ? "gone" : "old actor still reachable";
    Key reused = 0;
    Identity fresh;
    for (Key key = 2; key < 66 && reused == 0; ++key) {
      auto text = co_await ctx.request_to(group, Question{key, {}, "who"});
      if (!text) continue;
      fresh = parse_identity(*text);
      if (fresh.cell == old.cell) reused = key;
    }
    if (reused == 0) {
      report += ", memory not reused";
    } else {
      report += fresh.addr.slot() == old.addr.slot() ? ", same memory and slot" : ", same memory";
      report += fresh.addr == old.addr ? ", same address" : "";
      auto sent = co_await ctx.send_to(old.addr, Keyed{reused, {}, "poke"});
      report += ", send " + name_of(sent);
      auto asked = co_await ctx.request_to(old.addr, Question{reused, {}, "count"});
      report += ", request " + (asked ? std::string("answered") : name_of(asked.error()));
      auto pokes = co_await ctx.request_to(fresh.addr, Question{reused, {}, "count"});
      report += ", new actor poked " + (pokes ? *pokes : name_of(pokes.error()));
    }
    std::ignore = co_await ctx.send(Seen{0, report});
  }
}

Blueprint reuse_group() {
  return ActorGroup().router(MapRouter<Key>(route_reuse)).exec([](Context<NoConfig, Key> ctx) {
    return ctx.key() == 0 ? reuse_checker(ctx) : reuse_target(ctx);
  });
}

}  // namespace

TEST_CASE("a stale address finds nothing after its actor's memory and slot went to a new actor", "[core][block_pool]") {
  // One worker: the actor that ends and the one started next run on the same thread, so the
  // pool hands the new actor the old one's block.
  testing::ProxyOptions options;
  options.workers = 1;
  auto proxy = testing::proxy(reuse_group(), {}, options);
  proxy.send(Start{});
#if defined(ELFIN_TEST_POOL_OFF)
  // The allocator decides whether the memory comes back; the old address must find nothing.
  const auto seen = recv_seen(proxy, 1);
  CHECK(seen[0].find("not reused") != std::string::npos);
#else
  CHECK(recv_seen(proxy, 1) ==
        std::vector<std::string>{"0:gone, same memory and slot, send Closed, request Failed, new actor poked 0"});
#endif
}
