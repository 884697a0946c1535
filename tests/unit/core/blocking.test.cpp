// ctx.blocking(fn): fn runs on a thread of the system's blocking pool; the actor keeps answering
// while it blocks (awaited in a Stream); its result or exception comes back on the actor's thread;
// an actor that ends meanwhile drops the result; under virtual time fn runs inline.
#include <catch2/catch.hpp>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "test_support.hpp"

using namespace std::chrono_literals;
using namespace elfin;
using namespace elfin::test;

namespace {

std::string thread_name() {
  char name[16] = {};
  (void)pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

/// Holds the blocking functions until the test opens it.
class Latch {
 public:
  void open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void reset() {
    std::lock_guard lock(mu_);
    open_ = false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

Latch& latch() {
  static Latch instance;
  return instance;
}

/// Written by the blocking function's captures when the pool destroys them.
struct DropGuard {
  std::shared_ptr<int> alive = std::make_shared<int>(0);
  DropGuard() = default;
  DropGuard(DropGuard&&) = default;
  DropGuard(const DropGuard&) = default;
  DropGuard& operator=(DropGuard&&) = default;
  DropGuard& operator=(const DropGuard&) = default;
  ~DropGuard() {
    if (alive && alive.use_count() == 1) journal().add("fn destroyed");
  }
};

/// Waits on the latch in the pool, then answers the thread it ran on.
Task<Seen> held(Context<> ctx) {
  DropGuard guard;
  std::string where = co_await ctx.blocking([guard] {
    journal().add("fn waiting");
    latch().wait();
    journal().add("fn returned");
    return thread_name();
  });
  co_return Seen{0, "done on " + where, 0};
}

/// Keyed modes: "hold" waits in a Stream (the actor goes on); "quit" ends the actor; "throw" awaits a throwing fn in
/// the actor's own loop; "where" reports where fn and the actor ran. GetValue answers how many messages the actor
/// handled. Results go to the sender.
Task<> blocker(Context<> ctx) {
  Addr reply_to;
  std::uint64_t handled = 0;
  while (auto envelope = co_await ctx.recv()) {
    ++handled;
    if (envelope->is<GetValue>()) {
      ctx.respond(envelope->take_token<GetValue>(), handled);
    } else if (const auto* seen = envelope->get<Seen>()) {
      std::ignore = ctx.try_send_to(reply_to, Seen{*seen});
    } else if (const auto* keyed = envelope->get<Keyed>()) {
      reply_to = envelope->sender();
      if (keyed->mode == "hold") {
        ctx.attach(Stream::once(held(ctx)));
      } else if (keyed->mode == "quit") {
        co_return;
      } else if (keyed->mode == "throw") {
        std::string what;
        try {
          co_await ctx.blocking([]() -> int { throw std::runtime_error("disk full"); });
        } catch (const std::runtime_error& e) {
          what = e.what();
        }
        std::ignore = ctx.try_send_to(reply_to, Seen{0, "caught " + what + " on " + thread_name(), 0});
      } else if (keyed->mode == "where") {
        const std::string actor = thread_name();
        const std::string fn = co_await ctx.blocking([] { return thread_name(); });
        std::ignore = ctx.try_send_to(reply_to, Seen{0, fn == actor ? "inline" : "pool " + fn, 0});
      }
    }
  }
}

testing::Proxy start_blocker(bool virtual_time, StatusLog* statuses = nullptr) {
  Topology topology;
  topology.local("blocker").mount(ActorGroup().restart_policy(RestartPolicy::never()).exec(blocker));
  StartOptions start = quick_options();
  if (statuses != nullptr) start.on_status = statuses->callback();
  testing::ProxyOptions options;
  options.virtual_time = virtual_time;
  return testing::proxy(std::move(topology), "blocker", std::move(start), options);
}

}  // namespace

TEST_CASE("blocking: fn runs on a pool thread while the actor answers other messages", "[core][blocking]") {
  journal().clear();
  latch().reset();
  auto proxy = start_blocker(false);
  proxy.send(Keyed{0, {}, "hold"});
  REQUIRE(journal().wait_for_line("fn waiting"));
  // fn is blocked: the actor still takes requests.
  const std::uint64_t before = proxy.request(GetValue{});
  CHECK(proxy.request(GetValue{}) == before + 1);
  latch().open();
  CHECK(proxy.recv_as<Seen>().what == "done on elfin-blocking");
}

TEST_CASE("blocking: fn's exception is rethrown in the awaiting coroutine, on the actor's thread", "[core][blocking]") {
  journal().clear();
  auto proxy = start_blocker(false);
  proxy.send(Keyed{0, {}, "throw"});
  const std::string what = proxy.recv_as<Seen>().what;
  CHECK(what.starts_with("caught disk full on elfin-worker-"));
}

TEST_CASE("blocking: an actor that ends while fn runs drops the result; fn finishes", "[core][blocking]") {
  journal().clear();
  latch().reset();
  StatusLog statuses;
  auto proxy = start_blocker(false, &statuses);
  proxy.send(Keyed{0, {}, "hold"});
  REQUIRE(journal().wait_for_line("fn waiting"));
  proxy.send(Keyed{0, {}, "quit"});
  REQUIRE(statuses.wait_for("blocker", "_", ActorStatusKind::Terminated));
  latch().open();
  REQUIRE(journal().wait_for_line("fn destroyed"));
  CHECK(journal().with_prefix("fn returned").size() == 1);
  proxy.sync();
  CHECK_FALSE(proxy.try_recv());
}

TEST_CASE("blocking: under virtual time fn runs inline, on the actor's thread", "[core][blocking]") {
  journal().clear();
  auto proxy = start_blocker(true);
  for (int round = 0; round < 3; ++round) {
    proxy.send(Keyed{0, {}, "where"});
    CHECK(proxy.recv_as<Seen>().what == "inline");
    proxy.advance(1s);
  }
}
