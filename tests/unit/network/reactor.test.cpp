// The network's event loop (Reactor) and who runs it: an idle worker reads a socket and the actor
// the read wakes runs right after it on that worker; while every worker is busy, the I/O thread
// runs the loop instead.
#include <catch2/catch.hpp>

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <asio/connect.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/elfin.hpp>
#include <elfin/internal/system_hooks.hpp>

#include "../eventually.hpp"
#include "reactor.hpp"

namespace {

using Key = std::uint64_t;
using elfin::network::detail::Reactor;
using elfin::test::eventually;

struct Arrived {
  std::uint64_t n = 0;
  ELFIN_MESSAGE(reactor_test, Arrived, n);
};
/// Keeps its actor (and so its worker) busy until `g_release`.
struct Hog {
  ELFIN_MESSAGE(reactor_test, Hog);
  ELFIN_NO_DUMPING;
};

std::atomic<bool> g_hogging{false};
std::atomic<bool> g_release{false};

// Which thread ran the turn of the actor that got Arrived n.
std::mutex g_turns_mu;
std::vector<std::optional<std::thread::id>> g_turns;  // guarded by g_turns_mu

elfin::Task<> record(elfin::Context<elfin::NoConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* arrived = envelope->get<Arrived>()) {
      std::lock_guard lock(g_turns_mu);
      g_turns.at(arrived->n) = std::this_thread::get_id();
    } else if (envelope->is<Hog>()) {
      g_hogging = true;
      while (!g_release.load()) std::this_thread::yield();
    }
  }
}

elfin::Outcome<Key> route(const elfin::Envelope& e) {
  if (const auto* arrived = e.get<Arrived>()) return elfin::Outcome<Key>::Unicast(arrived->n);
  if (e.is<Hog>()) return elfin::Outcome<Key>::Unicast(~Key{0});
  return elfin::Outcome<Key>::Default();
}

std::optional<std::thread::id> turn_of(std::uint64_t n) {
  std::lock_guard lock(g_turns_mu);
  return g_turns.at(n);
}

std::string this_thread_name() {
  std::array<char, 16> name{};
  pthread_getname_np(pthread_self(), name.data(), name.size());
  return name.data();
}

/// A system of recording actors and an event loop driven the network's way: idle workers first,
/// an I/O thread of the test's own as the cover.
struct Fixture {
  explicit Fixture(unsigned workers, std::size_t events) {
    {
      std::lock_guard lock(g_turns_mu);
      g_turns.assign(events, std::nullopt);
    }
    g_hogging = false;
    g_release = false;
    elfin::Topology topology;
    topology.local("recorders").mount(elfin::ActorGroup().router(elfin::MapRouter<Key>{route}).exec(record));
    elfin::StartOptions options;
    options.workers = workers;
    auto started = elfin::System::start(std::move(topology), std::move(options));
    REQUIRE(started.ok());
    system.emplace(std::move(started).value());
    REQUIRE(elfin::detail::set_idle_waiter(system->core(), &reactor));
    io_thread = std::thread([this] { reactor.run_io_thread(true); });
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() {
    g_release = true;
    CHECK(elfin::detail::set_idle_waiter(system->core(), nullptr));
    reactor.detach();
    work.reset();
    io_thread.join();
    system->terminate();
    system->join();
  }
  /// As a connection delivers a frame: from the thread running the loop, no actor context.
  void deliver(elfin::Envelope envelope) {
    elfin::detail::SendOp op{system->core(), system->group_addr("recorders"), std::move(envelope),
                             elfin::detail::SendMode::Bounded};
    REQUIRE(op.run_until_full());
  }

  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  Reactor reactor{io};
  std::optional<elfin::System> system;
  std::thread io_thread;
};

}  // namespace

TEST_CASE("a socket read by an idle worker wakes its actor onto that worker, which runs it next",
          "[network][reactor]") {
  constexpr std::size_t kEvents = 50;
  Fixture fixture(2, kEvents);
  asio::ip::tcp::acceptor acceptor(fixture.io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  asio::io_context client_io;
  asio::ip::tcp::socket client(client_io);
  client.connect(acceptor.local_endpoint());
  asio::ip::tcp::socket server(fixture.io);
  acceptor.accept(server);

  struct Read {
    std::thread::id thread;
    bool on_worker = false;
  };
  std::mutex reads_mu;
  std::vector<Read> reads(kEvents);  // guarded by reads_mu
  std::array<std::uint8_t, 1> read_byte{};
  const std::array<std::uint8_t, 1> sent_byte{42};
  std::uint64_t next = 0;
  std::atomic<bool> aborted{false};
  std::function<void()> read_one = [&] {
    asio::async_read(server, asio::buffer(read_byte), [&](std::error_code ec, std::size_t) {
      if (ec) {
        aborted = true;
        return;
      }
      {
        std::lock_guard lock(reads_mu);
        reads.at(next) = Read{std::this_thread::get_id(), this_thread_name().starts_with("elfin-worker-")};
      }
      fixture.deliver(elfin::Envelope::make(Arrived{next}, elfin::Addr{}, elfin::TraceId{}));
      ++next;
      read_one();
    });
  };
  asio::post(fixture.io, read_one);

  unsigned on_workers = 0;
  for (std::uint64_t n = 0; n < kEvents; ++n) {
    asio::write(client, asio::buffer(sent_byte));
    REQUIRE(eventually([&] { return turn_of(n).has_value(); }));
    std::lock_guard lock(reads_mu);
    // A worker can be late to the loop on a loaded machine (then the cover reads, and the actor
    // runs wherever a worker takes it); a read on a worker is never followed by a hand-off.
    if (reads[n].on_worker) {
      ++on_workers;
      CHECK(*turn_of(n) == reads[n].thread);
    }
  }
  CHECK(on_workers >= kEvents / 2);
  // The loop's objects are closed on the loop, and the read it had pending ends there too.
  asio::post(fixture.io, [&] {
    std::error_code ignored;
    server.close(ignored);
    acceptor.close(ignored);
  });
  CHECK(eventually([&] { return aborted.load(); }));
}

TEST_CASE("while every worker is busy, the I/O thread runs the event loop", "[network][reactor]") {
  Fixture fixture(1, 1);
  fixture.deliver(elfin::Envelope::make(Hog{}, elfin::Addr{}, elfin::TraceId{}));
  REQUIRE(eventually([] { return g_hogging.load(); }));
  std::atomic<bool> ran{false};
  std::string ran_on;
  asio::post(fixture.io, [&] {
    ran_on = this_thread_name();
    ran = true;
  });
  CHECK(eventually([&] { return ran.load(); }));
  CHECK_FALSE(ran_on.starts_with("elfin-worker-"));
  g_release = true;
}
