// The scheduler seen from outside: actors woken by a non-worker thread inside a ScheduleBatch
// (what the network's I/O thread does for one socket read) wait for the flush and then all run;
// worker threads carry their names.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/detail/send_op.hpp>
#include <elfin/elfin.hpp>
#include <elfin/internal/system_hooks.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

std::atomic<std::uint64_t> g_handled{0};

Task<> count_ticks(Context<NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Tick>()) g_handled.fetch_add(1);
  }
}

Outcome<Key> route_tick(const Envelope& e) {
  if (const auto* tick = e.get<Tick>()) return Outcome<Key>::Unicast(tick->n);
  return Outcome<Key>::Default();
}

Result<System, StartError> start_counters() {
  Topology topology;
  topology.local("counters").mount(ActorGroup().router(MapRouter<Key>{route_tick}).exec(count_ticks));
  StartOptions options;
  options.workers = 2;
  return System::start(std::move(topology), std::move(options));
}

/// Sends from the calling thread, as an I/O thread delivers: no actor context.
void deliver(System& system, std::uint64_t key) {
  detail::SendOp op{system.core(), system.group_addr("counters"), Envelope::make(Tick{key}, Addr{}, TraceId{}),
                    detail::SendMode::Bounded};
  REQUIRE(op.run_until_full());
}

std::set<std::string> thread_names() {
  std::set<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.insert(name);
  }
  return names;
}

}  // namespace

TEST_CASE("actors a non-worker thread wakes inside a ScheduleBatch run once it is flushed, all of them",
          "[core][scheduler]") {
  g_handled = 0;
  auto system = start_counters();
  REQUIRE(system.ok());
  deliver(*system, 1000);  // outside a batch: runs at once
  REQUIRE(eventually([] { return g_handled.load() == 1; }));

  constexpr std::uint64_t kActors = 50;
  {
    detail::ScheduleBatch batch(system->core());
    for (std::uint64_t key = 0; key < kActors; ++key) deliver(*system, key);
    // Nothing is queued for the workers yet: for a while, nobody runs. (A bounded look for the
    // wrong thing happening; it cannot fail when the batch works.)
    CHECK_FALSE(eventually([] { return g_handled.load() > 1; }, std::chrono::milliseconds(50)));
    batch.flush();
    CHECK(eventually([] { return g_handled.load() == 1 + kActors; }));
    // Woken after a flush, inside the same batch: queued at the end of the batch.
    deliver(*system, 2000);
  }
  CHECK(eventually([] { return g_handled.load() == 2 + kActors; }));
  system->terminate();
  system->join();
}

TEST_CASE("elfin's threads are named after what they do", "[core][scheduler]") {
  auto system = start_counters();
  REQUIRE(system.ok());
  // Each thread names itself as it starts.
  CHECK(eventually([] {
    const auto names = thread_names();
    return names.count("elfin-worker-0") == 1 && names.count("elfin-worker-1") == 1;
  }));
  system->terminate();
  system->join();
}
