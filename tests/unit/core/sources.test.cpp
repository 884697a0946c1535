// Sources: Interval, Delay, Signal and Stream attached to an actor, polled by recv together with
// the mailbox; their trace id rules; detaching; and time-based sources under virtual time.
#include <csignal>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using namespace std::chrono_literals;

namespace {

/// What the test asks the actor to do with its sources.
struct Cmd {
  std::string what;
  std::int64_t a = 0;
  std::int64_t b = 0;
  ELFIN_MESSAGE(sources_test, Cmd, what, a, b);
};
struct IntervalTick {
  ELFIN_MESSAGE(sources_test, IntervalTick);
};
struct DelayFired {
  ELFIN_MESSAGE(sources_test, DelayFired);
};
struct SignalSeen {
  std::string name;
  ELFIN_MESSAGE(sources_test, SignalSeen, name);
};
struct DataFetched {
  std::string data;
  ELFIN_MESSAGE(sources_test, DataFetched, data);
};
struct FetchFailed {
  std::string reason;
  ELFIN_MESSAGE(sources_test, FetchFailed, reason);
};
struct Item {
  std::int64_t n = 0;
  ELFIN_MESSAGE(sources_test, Item, n);
};

using Ctx = Context<>;

/// Asks the test (through the proxy) for data; a reply starting with "fail" is a failure.
Task<Result<DataFetched, FetchFailed>> fetch_data(Ctx ctx, std::string what) {
  Echo question{what};
  auto answer = co_await ctx.request(std::move(question));
  if (!answer) co_return Err{FetchFailed{"no answer"}};
  if (answer->starts_with("fail")) co_return Err{FetchFailed{*answer}};
  co_return DataFetched{*answer};
}

/// Emits Item{0..count-1}; a negative count emits forever.
Task<> produce(Emitter emitter, std::int64_t count) {
  for (std::int64_t n = 0; count < 0 || n < count; ++n) {
    Item item{n};
    co_await emitter.emit(item);
  }
}

/// Emits Item{0}, fails, and never gets to Item{1}.
Task<> produce_then_throw(Emitter emitter) {
  Item first{0};
  co_await emitter.emit(first);
  throw std::runtime_error("the generator broke");
}

/// Emits `count` items, letting other actors run before each.
Task<> produce_yielding(Emitter emitter, Ctx ctx, std::int64_t count) {
  for (std::int64_t n = 0; n < count; ++n) {
    co_await ctx.yield_now();
    Item item{n};
    co_await emitter.emit(item);
  }
}

/// An async sequence of `left` items, each fetched from the test with an Echo request.
struct Asked {
  Ctx ctx;
  std::int64_t left = 0;
  std::int64_t n = 0;
  Task<std::optional<Item>> next() {
    if (left == 0) co_return std::nullopt;
    --left;
    Echo question{"item"};
    std::ignore = co_await ctx.request(std::move(question));
    co_return Item{n++};
  }
};

Task<> report(Ctx& ctx, std::string what, std::uint64_t key = 0) {
  Seen seen{key, std::move(what), ctx.trace_id().raw()};
  std::ignore = co_await ctx.send(std::move(seen));
}

/// The actor under test: attaches and controls sources as Cmds say, and reports every message
/// it gets from them as Seen{key, what, trace}.
Task<> source_user(Ctx ctx) {
  std::optional<Interval<IntervalTick>> interval;
  std::optional<Delay<DelayFired>> delay;
  std::vector<Signal<SignalSeen>> signals;
  std::optional<Stream> stream;
  std::uint64_t ticks = 0;
  std::uint64_t flood_items = 0;  // items of an endless stream are counted, not reported
  bool flooding = false;
  bool chain = false;  // every tick attaches a Delay of 500 ms
  bool feed = false;   // send ourselves a Cmd{"feed"} after each one, until a tick arrives
  while (auto envelope = co_await ctx.recv()) {
    std::string out;
    std::uint64_t key = 0;
    bool exit = false;
    co_await handle(
        *envelope,
        [&](const Cmd& cmd) {
          out = "ack:" + cmd.what;
          const auto a = std::chrono::milliseconds(cmd.a);
          const auto b = std::chrono::milliseconds(cmd.b);
          if (cmd.what == "interval") {
            interval = ctx.attach(Interval(IntervalTick{}));
            interval->start(a);
          } else if (cmd.what == "interval_after") {
            interval = ctx.attach(Interval(IntervalTick{}));
            interval->start_after(a, b);
          } else if (cmd.what == "interval_grid") {
            interval = ctx.attach(Interval(IntervalTick{}));
            interval->start_on_grid(a);
          } else if (cmd.what == "interval_grid_preset") {
            Interval preset(IntervalTick{});
            preset.start_on_grid(a);  // before attach: the grid is found when attached
            interval = ctx.attach(preset);
          } else if (cmd.what == "interval_preset") {
            Interval preset(IntervalTick{});
            preset.start(a);  // before attach: the schedule starts when attached
            interval = ctx.attach(preset);
          } else if (cmd.what == "self_feed") {
            feed = true;
          } else if (cmd.what == "feed") {
            out.clear();  // silent: the test only wants to see the tick
          } else if (cmd.what == "chain") {
            chain = true;
          } else if (cmd.what == "set_period") {
            interval->set_period(a);
          } else if (cmd.what == "restart") {
            interval->start(a);
          } else if (cmd.what == "restart_on_grid") {
            interval->start_on_grid(a);
          } else if (cmd.what == "stop") {
            interval->stop();
          } else if (cmd.what == "terminate") {
            interval->terminate();
          } else if (cmd.what == "delay") {
            delay = ctx.attach(Delay(a, DelayFired{}));
          } else if (cmd.what == "delay_cancel") {
            delay->terminate();
          } else if (cmd.what == "delay_done") {
            out = delay->is_terminated() ? "delay terminated" : "delay pending";
          } else if (cmd.what == "signal") {
            const auto kind = static_cast<SignalKind>(cmd.a);
            signals.push_back(ctx.attach(Signal(kind, SignalSeen{fmt::format("{}#{}", cmd.a, signals.size())})));
          } else if (cmd.what == "signals_off") {
            for (auto& s : signals) s.terminate();
          } else if (cmd.what == "once") {
            stream = ctx.attach(Stream::once(fetch_data(ctx, cmd.a == 0 ? "ok" : "fail")));
          } else if (cmd.what == "generate") {
            flooding = cmd.a < 0;
            stream = ctx.attach(Stream::generate(produce, cmd.a));
          } else if (cmd.what == "generate_throw") {
            stream = ctx.attach(Stream::generate(produce_then_throw));
          } else if (cmd.what == "generate_yield") {
            stream = ctx.attach(Stream::generate(produce_yielding, ctx, cmd.a));
          } else if (cmd.what == "from") {
            stream = ctx.attach(Stream::from(Asked{ctx, cmd.a}));
          } else if (cmd.what == "stream_done") {
            out = stream->is_terminated() ? "stream terminated" : "stream running";
          } else if (cmd.what == "exit") {
            exit = true;
          }
        },
        [&](const IntervalTick&) {
          out = "tick";
          key = ++ticks;
          feed = false;
          if (chain) ctx.attach(Delay(500ms, DelayFired{}));
        },
        [&](const DelayFired&) { out = "delay"; }, [&](const SignalSeen& s) { out = "signal:" + s.name; },
        [&](const DataFetched& d) { out = "fetched:" + d.data; },
        [&](const FetchFailed& f) { out = "failed:" + f.reason; },
        [&](const Item& item) {
          if (flooding) {
            ++flood_items;
            return;
          }
          out = "item";
          key = static_cast<std::uint64_t>(item.n);
        },
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), ticks + flood_items); });
    if (!out.empty()) co_await report(ctx, out, key);
    if (exit) break;
    if (feed) {
      Cmd next{"feed"};
      std::ignore = co_await ctx.send_to(ctx.addr(), std::move(next));
    }
  }
}

testing::Proxy virtual_proxy() { return testing::proxy(ActorGroup().exec(source_user), {}, {.virtual_time = true}); }

/// Sends a Cmd and waits for its ack (the proxy's recv deadline is real time).
void command(testing::Proxy& proxy, std::string what, std::int64_t a = 0, std::int64_t b = 0) {
  Cmd cmd{what, a, b};
  proxy.send(std::move(cmd));
  auto ack = proxy.recv_as<Seen>();
  REQUIRE(ack.what == "ack:" + what);
}

/// Everything queued for the proxy now, as Seen.what (others as protocol.Name).
std::vector<std::string> queued(testing::Proxy& proxy) {
  std::vector<std::string> out;
  while (auto envelope = proxy.try_recv()) {
    const Seen* seen = envelope->get<Seen>();
    out.push_back(seen ? seen->what : fmt::format("{}.{}", envelope->protocol(), envelope->name()));
  }
  return out;
}

/// Asks whether the stream has detached itself. A stream notices its end when it is polled after
/// its last item; a command handled first makes recv poll the sources before the next one.
std::string stream_state(testing::Proxy& proxy) {
  command(proxy, "noop");
  Cmd done{"stream_done"};
  proxy.send(std::move(done));
  return proxy.recv_as<Seen>().what;
}

std::size_t count_of(const std::vector<std::string>& lines, const std::string& what) {
  return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), what));
}

}  // namespace

// --- Interval ----------------------------------------------------------------------------------

TEST_CASE("an interval under virtual time ticks exactly once per period as time advances", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "interval", 1000);
  const auto wall = std::chrono::steady_clock::now();
  proxy.advance(30s);
  CHECK(std::chrono::steady_clock::now() - wall < 2s);  // 30 s of ticks, no real waiting
  auto seen = queued(proxy);
  CHECK(count_of(seen, "tick") == 30);
  CHECK(seen.size() == 30);
  proxy.advance(500ms);
  CHECK(queued(proxy).empty());
  proxy.advance(500ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
}

TEST_CASE("an interval started after a delay ticks first after the delay, then every period", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "interval_after", 500, 2000);
  proxy.advance(499ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  proxy.advance(1999ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
}

TEST_CASE("an interval started on the grid ticks at the clock's multiples of its period", "[core][sources]") {
  // The virtual clock starts 300 ms past a multiple of one second: the first tick comes 700 ms
  // later, on the grid, and every second after it, whenever the interval was started.
  const auto start = std::chrono::steady_clock::time_point{} + std::chrono::milliseconds(86'400'300);
  Topology topology;
  topology.local("subject").mount(ActorGroup().exec(source_user));
  StartOptions options;
  options.virtual_time = true;
  options.virtual_start = start;
  auto proxy = testing::proxy(std::move(topology), "subject", std::move(options), {.virtual_time = true});
  const std::string how = GENERATE("interval_grid", "interval_grid_preset");
  command(proxy, how, 1000);
  proxy.advance(699ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  proxy.advance(999ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  // Started again 250 ms past the grid: back on it 750 ms later, not a period after the call.
  proxy.advance(250ms);
  command(proxy, "restart_on_grid", 1000);
  proxy.advance(749ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
}

TEST_CASE("set_period keeps the interval's phase, start resets it", "[core][sources]") {
  // The book's picture: ticks every 5 s at 5, 10, 15; at 17 s the period becomes 10 s.
  //   set_period(10s): next tick at 25 s (10 s after the last one)
  //   start(10s):      next tick at 27 s (10 s after the call)
  auto proxy = virtual_proxy();
  command(proxy, "interval", 5000);
  proxy.advance(17s);
  REQUIRE(count_of(queued(proxy), "tick") == 3);

  SECTION("set_period") {
    command(proxy, "set_period", 10000);
    proxy.advance(7999ms);  // 24.999 s
    CHECK(queued(proxy).empty());
    proxy.advance(1ms);  // 25 s
    CHECK(queued(proxy) == std::vector<std::string>{"tick"});
    proxy.advance(10s);  // 35 s
    CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  }
  SECTION("start") {
    command(proxy, "restart", 10000);
    proxy.advance(9999ms);  // 26.999 s
    CHECK(queued(proxy).empty());
    proxy.advance(1ms);  // 27 s
    CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  }
}

TEST_CASE("a shorter period whose next tick has already passed ticks at once", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "interval", 10000);
  proxy.advance(15s);  // tick at 10 s
  REQUIRE(count_of(queued(proxy), "tick") == 1);
  command(proxy, "set_period", 2000);  // 10 s + 2 s is in the past: tick now, then every 2 s
  proxy.advance(0s);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
  proxy.advance(2s);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
}

TEST_CASE("a stopped interval stays attached and can start again; a terminated one is gone", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "interval", 1000);
  proxy.advance(3s);
  REQUIRE(count_of(queued(proxy), "tick") == 3);
  command(proxy, "stop");
  proxy.advance(10s);
  CHECK(queued(proxy).empty());
  command(proxy, "restart", 1000);
  proxy.advance(2s);
  CHECK(count_of(queued(proxy), "tick") == 2);
  command(proxy, "terminate");
  proxy.advance(10s);
  CHECK(queued(proxy).empty());
  auto& timers = detail::timers_of(proxy.system().core());
  CHECK(timers.pending() == 0);
  command(proxy, "restart", 1000);  // a terminated interval ignores start
  proxy.advance(10s);
  CHECK(queued(proxy).empty());
}

TEST_CASE("an interval started before it is attached starts ticking when attached", "[core][sources]") {
  auto proxy = virtual_proxy();
  proxy.advance(10s);  // time passing before the attach does not count
  command(proxy, "interval_preset", 1000);
  proxy.advance(999ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  CHECK(queued(proxy) == std::vector<std::string>{"tick"});
}

TEST_CASE("timers that actors set while time advances fire within the same advance", "[core][sources]") {
  // Each tick (every 1 s) attaches a 500 ms Delay: ticks and delays interleave in one call.
  auto proxy = virtual_proxy();
  command(proxy, "chain");
  command(proxy, "interval", 1000);
  proxy.advance(3s);
  CHECK(queued(proxy) == std::vector<std::string>{"tick", "delay", "tick", "delay", "tick"});
  proxy.advance(500ms);
  CHECK(queued(proxy) == std::vector<std::string>{"delay"});
}

TEST_CASE("every interval tick starts a new trace", "[core][sources]") {
  auto proxy = virtual_proxy();
  const TraceId start = TraceId::generate();
  proxy.set_trace_id(start);
  command(proxy, "interval", 1000);
  proxy.advance(3s);
  std::set<std::uint64_t> traces;
  for (int i = 0; i < 3; ++i) {
    auto seen = proxy.recv_as<Seen>();
    REQUIRE(seen.what == "tick");
    TraceId trace{seen.trace};
    CHECK(trace.is_valid());
    CHECK(trace != start);
    traces.insert(seen.trace);
  }
  CHECK(traces.size() == 3);
}

TEST_CASE("an interval ticks in real time too", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  command(proxy, "interval", 5);
  for (int i = 1; i <= 3; ++i) {
    auto seen = proxy.recv_as<Seen>();
    CHECK(seen.what == "tick");
    CHECK(seen.key == static_cast<std::uint64_t>(i));
  }
}

// --- Delay -------------------------------------------------------------------------------------

TEST_CASE("a delay delivers one message after its delay, continuing the trace, then detaches", "[core][sources]") {
  auto proxy = virtual_proxy();
  const TraceId cause = TraceId::generate();
  proxy.set_trace_id(cause);
  command(proxy, "delay", 5000);
  proxy.advance(4999ms);
  CHECK(queued(proxy).empty());
  proxy.advance(1ms);
  auto fired = proxy.recv_as<Seen>();
  CHECK(fired.what == "delay");
  CHECK(TraceId{fired.trace} == cause);
  proxy.advance(1h);
  CHECK(queued(proxy).empty());
  Cmd done{"delay_done"};
  proxy.send(std::move(done));
  CHECK(proxy.recv_as<Seen>().what == "delay terminated");
  CHECK(detail::timers_of(proxy.system().core()).pending() == 0);
}

TEST_CASE("a terminated delay never delivers", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "delay", 5000);
  proxy.advance(1s);
  command(proxy, "delay_cancel");
  CHECK(detail::timers_of(proxy.system().core()).pending() == 0);
  proxy.advance(1h);
  CHECK(queued(proxy).empty());
}

TEST_CASE("a delay delivers in real time", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  command(proxy, "delay", 10);
  CHECK(proxy.recv_as<Seen>().what == "delay");
}

// --- Signal ------------------------------------------------------------------------------------

TEST_CASE("a raised signal reaches every Signal source attached for it, each on a new trace", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  const TraceId start = TraceId::generate();
  proxy.set_trace_id(start);
  auto [kind, signo] = GENERATE(table<SignalKind, int>(
      {{SignalKind::Hangup, SIGHUP}, {SignalKind::User1, SIGUSR1}, {SignalKind::User2, SIGUSR2}}));
  command(proxy, "signal", static_cast<std::int64_t>(kind));
  command(proxy, "signal", static_cast<std::int64_t>(kind));
  REQUIRE(::raise(signo) == 0);
  std::vector<std::string> got;
  for (int i = 0; i < 2; ++i) {
    auto seen = proxy.recv_as<Seen>();
    got.push_back(seen.what);
    CHECK(TraceId{seen.trace}.is_valid());
    CHECK(TraceId{seen.trace} != start);
  }
  const auto k = static_cast<int>(kind);
  CHECK(sorted(got) == std::vector<std::string>{fmt::format("signal:{}#0", k), fmt::format("signal:{}#1", k)});

  SECTION("and none once they are terminated") {
    command(proxy, "signals_off");
    command(proxy, "signal", static_cast<std::int64_t>(kind));  // a third source, still listening
    REQUIRE(::raise(signo) == 0);  // still caught by the system's handler: the process lives on
    // One delivery marks every subscriber at once, the terminated ones first; by the time the
    // third one's message arrives, theirs would be pending too, and the next recv after a
    // command polls the sources before the mailbox.
    CHECK(proxy.recv_as<Seen>().what == fmt::format("signal:{}#2", k));
    command(proxy, "noop");
    command(proxy, "noop");
    CHECK(queued(proxy).empty());
  }
}

TEST_CASE("SIGTERM and SIGINT can be listened to as sources", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  auto [kind, signo] =
      GENERATE(table<SignalKind, int>({{SignalKind::Terminate, SIGTERM}, {SignalKind::Interrupt, SIGINT}}));
  command(proxy, "signal", static_cast<std::int64_t>(kind));
  REQUIRE(::raise(signo) == 0);
  CHECK(proxy.recv_as<Seen>().what == fmt::format("signal:{}#0", static_cast<int>(kind)));
}

// --- Stream ------------------------------------------------------------------------------------

TEST_CASE("Stream::once delivers the awaited value, success or failure, continuing the trace", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  const TraceId cause = TraceId::generate();
  proxy.set_trace_id(cause);
  const bool fail = GENERATE(false, true);
  command(proxy, "once", fail ? 1 : 0);
  // The stream's request reaches the proxy while the actor goes on handling its mailbox.
  Envelope request = proxy.recv();
  REQUIRE(request.get<Echo>());
  CHECK(request.trace_id() == cause);
  auto token = request.take_token<Echo>();
  std::move(token).respond(fail ? "failed badly" : "payload");
  auto seen = proxy.recv_as<Seen>();
  CHECK(seen.what == (fail ? "failed:failed badly" : "fetched:payload"));
  CHECK(TraceId{seen.trace} == cause);
  Cmd done{"stream_done"};  // once detaches as it delivers: no extra poll needed
  proxy.send(std::move(done));
  CHECK(proxy.recv_as<Seen>().what == "stream terminated");
}

TEST_CASE("Stream::generate delivers what the generator emits, in order, continuing the trace", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  const TraceId cause = TraceId::generate();
  proxy.set_trace_id(cause);
  command(proxy, "generate", 3);
  for (std::uint64_t n = 0; n < 3; ++n) {
    auto seen = proxy.recv_as<Seen>();
    CHECK(seen.what == "item");
    CHECK(seen.key == n);
    CHECK(TraceId{seen.trace} == cause);
  }
  CHECK(stream_state(proxy) == "stream terminated");
}

TEST_CASE("a generator that throws is detached and the actor goes on", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  command(proxy, "generate_throw");
  auto first = proxy.recv_as<Seen>();
  CHECK(first.what == "item");
  CHECK(stream_state(proxy) == "stream terminated");
  command(proxy, "noop");  // still alive
}

TEST_CASE("a generator may yield to other actors between items", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user), {}, {.workers = 1});
  command(proxy, "generate_yield", 5);
  for (std::uint64_t n = 0; n < 5; ++n) {
    auto seen = proxy.recv_as<Seen>();
    CHECK(seen.what == "item");
    CHECK(seen.key == n);
  }
  CHECK(stream_state(proxy) == "stream terminated");
}

TEST_CASE("Stream::from an async sequence delivers each item on a new trace", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user));
  const TraceId cause = TraceId::generate();
  proxy.set_trace_id(cause);
  command(proxy, "from", 3);
  std::set<std::uint64_t> traces;
  for (std::uint64_t n = 0; n < 3; ++n) {
    Envelope ask = proxy.recv();
    REQUIRE(ask.get<Echo>());
    ask.take_token<Echo>().respond("ok");
    auto seen = proxy.recv_as<Seen>();
    CHECK(seen.what == "item");
    CHECK(seen.key == n);
    CHECK(TraceId{seen.trace} != cause);
    traces.insert(seen.trace);
  }
  CHECK(traces.size() == 3);
  CHECK(stream_state(proxy) == "stream terminated");
}

// --- fairness and lifetime ---------------------------------------------------------------------

TEST_CASE("a source that always has items does not starve the mailbox", "[core][sources]") {
  auto proxy = testing::proxy(ActorGroup().exec(source_user), {}, {.workers = 1});
  command(proxy, "generate", -1);  // emits forever; the actor counts the items
  const auto first = proxy.request(GetValue{});
  const auto second = proxy.request(GetValue{});
  CHECK(second > first);  // answered, and the stream kept going in between
}

TEST_CASE("a mailbox that is never empty does not starve a source", "[core][sources]") {
  // The actor sends itself a message after every message it handles, so its mailbox is never
  // empty when it calls recv; the interval's tick still gets through (and ends the feeding).
  auto proxy = testing::proxy(ActorGroup().exec(source_user), {}, {.workers = 1});
  command(proxy, "self_feed");
  command(proxy, "interval", 1);
  CHECK(proxy.recv_as<Seen>().what == "tick");
}

TEST_CASE("sources die with their actor", "[core][sources]") {
  auto proxy = virtual_proxy();
  command(proxy, "interval", 1000);
  command(proxy, "delay", 60000);
  auto& timers = detail::timers_of(proxy.system().core());
  CHECK(timers.pending() == 2);
  Cmd exit{"exit"};
  proxy.send(std::move(exit));
  CHECK(proxy.recv_as<Seen>().what == "ack:exit");
  REQUIRE(eventually([&] { return proxy.system().active_actors() == 1; }));  // the proxy alone
  CHECK(timers.pending() == 0);
  proxy.advance(2min);
  CHECK(queued(proxy).empty());
}
