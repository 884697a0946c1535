// bench_messaging: elfin's messaging hot paths, side by side with the CAF 0.17 peer and, in the
// ping_pong, request_response and throughput cases, the SObjectizer 5.8 peer.
//
//   ping_pong         two actors bounce one Ball; ops = round trips
//   request_response  strictly sequential `co_await ctx.request(Inc{x})`; ops = requests
//   throughput_1to1   1 producer → 1 consumer with `co_await ctx.send(Item)`; ops = messages
//   throughput_Nto1   N producers (N = 2, 4, 8, 64) → 1 consumer, the same; ops = messages (the
//                     total is the same for every N, split evenly among the producers)
//   latency_ping_pong ping_pong with every round trip timed (steady_clock before the send and after
//                     the answer came back): p50/p99 of the round trip
//   latency_8to1      throughput_8to1 with every message carrying its send time (steady_clock, ns,
//                     read just before `co_await ctx.send`); the consumer records now − send time
//                     on receipt. The producers flood, so this is the latency of a saturated
//                     stream: it includes waiting behind the bounded mailbox's backlog (≤ 100
//                     messages). Both latency cases record into a log-linear histogram (32 buckets
//                     per power of two, ≤ 3% error) and print the median over the reps of each
//                     run's p50 and p99; elfin only
//   injection_queue   the scheduler's global queue (actors woken from outside the workers) alone:
//                     2 threads push 2 M pointers, 2 threads pop them; the queue as it is (std::mutex +
//                     RingBuffer, an atomic length read before locking, as Scheduler::pop_global)
//                     next to moodycamel::ConcurrentQueue (peer column `moodycamel`); ops = items
//   handoff_queue     the same with one pushing and one popping thread (a hand-off to an I/O thread)
//   flood_rss         peak RSS (getrusage ru_maxrss, KiB) of a child process that runs one 64→1
//                     flood of 6.4 M messages, elfin's and (in another child) CAF's, next to the
//                     child's RSS just before the flood; ops = messages
//   routed_send       throughput_1to1 with `ctx.send` (inter-group route + the consumer group's router)
//   direct_send       throughput_1to1 with `ctx.send_to(consumer's address)` (no routing at all)
//   dump_write        the dumper's writer thread alone: recorded dumps of Item → dump-file lines in
//                     /dev/null; ops = dumps (elfin only, no actors)
//   dump_floor        what recording the two dumps of one message cannot do without, alone: per
//                     dump a read of the dumps' clock, a group's shared sequence number, a 128-byte
//                     record into a cache-resident ring; ops = messages (no actors, no storage, no writer)
//
// Every elfin mailbox here has the default capacity (100), so a producer that outruns its consumer
// waits in `co_await ctx.send`. CAF's mailboxes are unbounded: its producers never wait and the
// backlog piles up in the consumer's mailbox instead. Both are each framework's normal semantics.
//
// `--variant direct` makes request_response and the throughput cases address the server/consumer
// directly (`request_to`/`send_to` an address learnt during the untimed setup), which is what the
// CAF peer does with its actor handles; `--variant routed` makes ping_pong's ping route every ball
// (`ctx.send`) instead of addressing pong. Without a variant each case uses what the benchmark
// brief names: ctx.request / ctx.send through the topology, and ping_pong bouncing to the sender.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <concurrentqueue/concurrentqueue.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/dumper/dumper.hpp>
#include <elfin/elfin.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/internal/ring_buffer.hpp>
#include <elfin/telemeter/telemeter.hpp>

#include "bench_common.hpp"

#if defined(ELFIN_HAVE_CAF)
#include <elfin_bench/caf_peer.hpp>
#endif
#if defined(ELFIN_HAVE_SOBJECTIZER)
#include <elfin_bench/so_peer.hpp>
#endif

namespace {

using namespace elfin;
using elfin_bench::error_text;
using elfin_bench::Figure;
using elfin_bench::Options;
using elfin_bench::report;
using elfin_bench::report_error;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kBench = "messaging";

// --- protocol -----------------------------------------------------------------------------------
// Hot-path messages carry one std::uint64_t, like the CAF peer's.

struct Ball {
  std::uint64_t value = 0;  ///< round trips completed so far; pong returns value + 1
  ELFIN_MESSAGE(bench_messaging, Ball, value);
};
struct Inc {
  std::uint64_t x = 0;
  ELFIN_REQUEST(bench_messaging, Inc, std::uint64_t, x);  // answered with x + 1
};
struct Item {
  std::uint64_t value = 0;
  ELFIN_MESSAGE(bench_messaging, Item, value);
};
/// Spawns (untimed) the producers 0..count-1; each answers 0.
struct Warm {
  std::uint32_t count = 0;
  ELFIN_REQUEST(bench_messaging, Warm, std::uint64_t, count);
};
/// Asks a singleton for its address (raw), so later sends can skip routing.
struct WhoAreYou {
  ELFIN_REQUEST(bench_messaging, WhoAreYou, std::uint64_t);
};
/// Starts producers 0..producers-1; each sends `messages` Items with values 0..messages-1, to
/// `consumer` if set, else through routing.
struct Start {
  std::uint32_t producers = 0;
  std::uint64_t messages = 0;
  std::uint64_t consumer = 0;
  bool stamped = false;  ///< send StampedItem instead of Item
  ELFIN_MESSAGE(bench_messaging, Start, producers, messages, consumer, stamped);
};
/// Item with the time it was sent (steady_clock, ns), for latency_8to1.
struct StampedItem {
  std::uint64_t value = 0;
  std::int64_t sent_ns = 0;
  ELFIN_MESSAGE(bench_messaging, StampedItem, value, sent_ns);
};
struct Done {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  ELFIN_MESSAGE(bench_messaging, Done, count, sum);
};

// --- latency histogram --------------------------------------------------------------------------
// Log-linear: values below 64 ns exactly, then 32 buckets per power of two (a bucket is at most
// 1/32 of its values wide). One writer (the timing actor); read by main after the driver's report.

class LatencyHistogram {
 public:
  void record(std::int64_t ns) {
    const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0));
    ++counts_[index(v)];
    ++total_;
  }
  [[nodiscard]] std::uint64_t total() const { return total_; }
  /// The lower bound of the bucket holding the q-quantile (0 < q < 1).
  [[nodiscard]] std::uint64_t quantile(double q) const {
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen > rank) return lower_bound(i);
    }
    return 0;
  }
  void clear() {
    counts_.fill(0);
    total_ = 0;
  }

 private:
  static constexpr unsigned kSubBits = 5;  // 32 buckets per octave
  static constexpr std::size_t kLinear = 64;
  static std::size_t index(std::uint64_t v) {
    if (v < kLinear) return v;
    const unsigned msb = 63 - static_cast<unsigned>(__builtin_clzll(v));
    const std::uint64_t sub = (v >> (msb - kSubBits)) & ((1u << kSubBits) - 1);
    return kLinear + std::size_t{msb - 6} * (std::size_t{1} << kSubBits) + sub;
  }
  static std::uint64_t lower_bound(std::size_t i) {
    if (i < kLinear) return i;
    const std::size_t k = i - kLinear;
    const unsigned msb = static_cast<unsigned>(k >> kSubBits) + 6;
    const std::uint64_t sub = k & ((1u << kSubBits) - 1);
    return (std::uint64_t{1} << msb) + (sub << (msb - kSubBits));
  }
  std::array<std::uint64_t, kLinear + std::size_t{64 - 6} * (std::size_t{1} << kSubBits)> counts_{};
  std::uint64_t total_ = 0;
};

/// Where the latency cases record (set by the case while its system runs, else null).
LatencyHistogram* g_latency = nullptr;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Waits for the next `M`, skipping anything else (the start-up ConfigUpdated); nullopt if closed.
// A nested Task costs one frame allocation per call, so it is only used off the hot path.
template <class M, class Ctx>
Task<std::optional<Envelope>> recv_next(Ctx ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->template is<M>()) co_return std::move(envelope);
  }
  co_return std::nullopt;
}

// Keeps a driver alive (and answering Ping) until termination closes its mailbox.
// Note: write `while (auto envelope = co_await ctx.recv())`, not `while (co_await ctx.recv())`:
// with g++ 12 the latter, in a nested Task, resumed a bogus frame after termination (segfault).
template <class Ctx>
Task<> idle_until_closed(Ctx ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

// --- ping_pong ------------------------------------------------------------------------------------

struct PingConfig {
  std::uint64_t round_trips = 0;
  bool routed = false;  ///< route every ball (`ctx.send`) instead of sending to pong's address
  bool timed = false;   ///< record every round trip into g_latency
  ELFIN_CONFIG(round_trips, routed, timed);
};

Task<> ping_exec(Context<PingConfig> ctx) {
  const std::uint64_t n = ctx.config().round_trips;
  const bool routed = ctx.config().routed;
  LatencyHistogram* latency = ctx.config().timed ? g_latency : nullptr;
  // Untimed handshake: the first ball goes through routing (it finds or starts pong); the answer's
  // sender is pong's address, which every later ball is sent to (as CAF's ping holds pong's handle).
  if (auto sent = co_await ctx.send(Ball{0}); !sent)
    co_return report_error(error_text("ping: first ball", sent.error()));
  auto first = co_await recv_next<Ball>(ctx);
  if (!first) co_return;
  const Addr pong = first->sender();

  const auto t0 = Clock::now();
  std::uint64_t completed = 0;
  while (completed < n) {
    const std::int64_t sent_at = latency != nullptr ? now_ns() : 0;
    Result<void, SendError<Ball>> sent;
    if (routed) {
      sent = co_await ctx.send(Ball{completed});
    } else {
      sent = co_await ctx.send_to(pong, Ball{completed});
    }
    if (!sent) co_return report_error(error_text("ping: send", sent.error()));
    std::optional<Envelope> envelope;
    do {
      envelope = co_await ctx.recv();
      if (!envelope) co_return;
    } while (!envelope->is<Ball>());
    const std::uint64_t value = envelope->get<Ball>()->value;
    if (value != completed + 1) {
      co_return report_error(fmt::format("ping: ball {} came back as {}", completed, value));
    }
    completed = value;
    if (latency != nullptr) latency->record(now_ns() - sent_at);
  }
  const auto t1 = Clock::now();
  report({elfin_bench::seconds_between(t0, t1), n});
  co_await idle_until_closed(ctx);
}

Task<> pong_exec(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    const Ball* ball = envelope->get<Ball>();
    if (ball == nullptr) continue;
    const std::uint64_t next = ball->value + 1;
    if (auto sent = co_await ctx.send_to(envelope->sender(), Ball{next}); !sent) {
      report_error(error_text("pong: send", sent.error()));
    }
  }
}

Figure elfin_ping_pong(std::uint64_t round_trips, bool routed, unsigned threads, bool timed = false) {
  Topology topology;
  auto ping = topology.local("ping");
  auto pong = topology.local("pong");
  ping.route_to(pong, filters::messages<Ball>());
  ping.mount(ActorGroup().config<PingConfig>().exec(ping_exec)).entrypoint();
  pong.mount(ActorGroup().exec(pong_exec));
  return elfin_bench::run_elfin(
      "ping_pong", std::move(topology),
      fmt::format("[ping]\nround_trips = {}\nrouted = {}\ntimed = {}\n", round_trips, routed, timed), threads);
}

// --- request_response -----------------------------------------------------------------------------

struct ClientConfig {
  std::uint64_t requests = 0;
  bool direct = false;  ///< `request_to(server's address)` instead of `request` through routing
  ELFIN_CONFIG(requests, direct);
};

Task<> client_exec(Context<ClientConfig> ctx) {
  const std::uint64_t n = ctx.config().requests;
  const bool direct = ctx.config().direct;
  // Untimed: one routed request starts the server; another one learns its address.
  auto first = co_await ctx.request(Inc{0});
  if (!first) co_return report_error(error_text("client: first request", first.error()));
  Addr server;
  if (direct) {
    auto where = co_await ctx.request(WhoAreYou{});
    if (!where) co_return report_error(error_text("client: WhoAreYou", where.error()));
    server = Addr{*where};
  }

  const auto t0 = Clock::now();
  std::uint64_t checksum = 0;
  for (std::uint64_t x = 0; x < n; ++x) {
    Result<std::uint64_t, RequestError> answer = Err{RequestError::Failed};
    if (direct) {
      answer = co_await ctx.request_to(server, Inc{x});
    } else {
      answer = co_await ctx.request(Inc{x});
    }
    if (!answer) co_return report_error(error_text("client: request", answer.error()));
    if (*answer != x + 1) co_return report_error(fmt::format("client: Inc{{{}}} answered {}", x, *answer));
    checksum += *answer;
  }
  const auto t1 = Clock::now();
  if (checksum != elfin_bench::sum_below(n + 1)) {
    co_return report_error(fmt::format("client: checksum {} != {}", checksum, elfin_bench::sum_below(n + 1)));
  }
  report({elfin_bench::seconds_between(t0, t1), n});
  co_await idle_until_closed(ctx);
}

Task<> server_exec(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Inc& inc, ResponseToken<Inc> token) { ctx.respond(std::move(token), inc.x + 1); },
        [&](const WhoAreYou&, ResponseToken<WhoAreYou> token) { ctx.respond(std::move(token), ctx.addr().raw()); });
  }
}

Figure elfin_request_response(std::uint64_t requests, bool direct, unsigned threads) {
  Topology topology;
  auto client = topology.local("client");
  auto server = topology.local("server");
  client.route_to(server, filters::messages<Inc, WhoAreYou>());
  client.mount(ActorGroup().config<ClientConfig>().exec(client_exec)).entrypoint();
  server.mount(ActorGroup().exec(server_exec));
  return elfin_bench::run_elfin("request_response", std::move(topology),
                                fmt::format("[client]\nrequests = {}\ndirect = {}\n", requests, direct), threads);
}

// --- throughput (also routed_send / direct_send) ----------------------------------------------------
// driver ──Warm/Start──▶ producers[0..P) ──Item──▶ consumer ──Done──▶ driver
// The consumer keeps the default mailbox capacity (100): a producer that gets ahead waits inside
// `co_await ctx.send` until the consumer frees a slot. CAF's mailboxes are unbounded, so the CAF
// peer's producers never wait and its backlog grows in the consumer's mailbox instead.

struct ThroughputConfig {
  std::uint32_t producers = 1;
  std::uint64_t messages = 0;  ///< per producer
  bool direct = false;         ///< producers `send_to(consumer's address)` instead of `send`
  bool flush_dumps = false;    ///< the timed part ends once the stream's dumps are in the file
  bool stamped = false;        ///< StampedItem: the consumer records each message's latency
  ELFIN_CONFIG(producers, messages, direct, flush_dumps, stamped);
};
struct ConsumerConfig {
  std::uint64_t expected = 0;
  ELFIN_CONFIG(expected);
};

Task<> throughput_driver_exec(Context<ThroughputConfig> ctx) {
  const ThroughputConfig cfg = ctx.config();
  // Untimed setup: start every producer (and learn the consumer's address), so the measured part
  // is only the messages.
  auto warmed = co_await ctx.request(Warm{cfg.producers}).all();
  if (warmed.size() != cfg.producers) {
    co_return report_error(fmt::format("driver: {} of {} producers answered Warm", warmed.size(), cfg.producers));
  }
  auto consumer = co_await ctx.request(WhoAreYou{});
  if (!consumer) co_return report_error(error_text("driver: WhoAreYou", consumer.error()));

  const auto t0 = Clock::now();
  Start start{cfg.producers, cfg.messages, cfg.direct ? *consumer : 0, cfg.stamped};
  if (auto sent = co_await ctx.send(start); !sent) co_return report_error(error_text("driver: Start", sent.error()));
  auto done = co_await recv_next<Done>(ctx);
  if (!done) co_return;
  if (cfg.flush_dumps) {
    // Dumping everything means writing everything: a dump still waiting in memory is not done.
    // (Dumps the full storage lost are not waited for: the run's counters on stderr show them.)
    auto flushed = co_await ctx.request(elfin::dumper::FlushDumps{});
    if (!flushed) co_return report_error(error_text("driver: FlushDumps", flushed.error()));
  }
  const auto t1 = Clock::now();

  const Done* d = done->get<Done>();
  const std::uint64_t total = std::uint64_t{cfg.producers} * cfg.messages;
  const std::uint64_t want_sum = std::uint64_t{cfg.producers} * elfin_bench::sum_below(cfg.messages);
  if (d->count != total || d->sum != want_sum) {
    co_return report_error(fmt::format("consumer got {} items summing to {}, expected {} summing to {}", d->count,
                                       d->sum, total, want_sum));
  }
  report({elfin_bench::seconds_between(t0, t1), total});
  while (auto rest = co_await ctx.recv()) {  // bound to a name: see the GCC 12 notes in book/src/actors.md
  }
}

Task<> producer_exec(Context<NoConfig, std::uint32_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    std::optional<Start> start;
    co_await handle(
        *envelope, [&](const Warm&, ResponseToken<Warm> token) { ctx.respond(std::move(token), 0); },
        [&](const Start& s) { start = s; });
    if (!start) continue;
    const Addr consumer{start->consumer};
    if (start->stamped) {
      for (std::uint64_t i = 0; i < start->messages; ++i) {
        Result<void, SendError<StampedItem>> sent;
        if (consumer.is_null()) {
          sent = co_await ctx.send(StampedItem{i, now_ns()});
        } else {
          sent = co_await ctx.send_to(consumer, StampedItem{i, now_ns()});
        }
        if (!sent) {
          report_error(error_text("producer: send", sent.error()));
          break;
        }
      }
      continue;
    }
    for (std::uint64_t i = 0; i < start->messages; ++i) {
      Result<void, SendError<Item>> sent;
      if (consumer.is_null()) {
        sent = co_await ctx.send(Item{i});
      } else {
        sent = co_await ctx.send_to(consumer, Item{i});
      }
      if (!sent) {
        report_error(error_text("producer: send", sent.error()));
        break;
      }
    }
  }
}

Task<> consumer_exec(Context<ConsumerConfig> ctx) {
  const std::uint64_t expected = ctx.config().expected;
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (const Item* item = envelope->get<Item>()) {  // the hot path first
      sum += item->value;
      if (++count == expected) {
        if (auto sent = co_await ctx.send(Done{count, sum}); !sent)
          report_error(error_text("consumer: Done", sent.error()));
      }
      continue;
    }
    if (const StampedItem* item = envelope->get<StampedItem>()) {
      if (g_latency != nullptr) g_latency->record(now_ns() - item->sent_ns);
      sum += item->value;
      if (++count == expected) {
        if (auto sent = co_await ctx.send(Done{count, sum}); !sent)
          report_error(error_text("consumer: Done", sent.error()));
      }
      continue;
    }
    co_await handle(*envelope, [&](const WhoAreYou&, ResponseToken<WhoAreYou> token) {
      ctx.respond(std::move(token), ctx.addr().raw());
    });
  }
}

MapRouter<std::uint32_t> producer_router() {
  return MapRouter<std::uint32_t>([](const Envelope& e) {
    auto all = [](std::uint32_t count) {
      std::vector<std::uint32_t> keys(count);
      for (std::uint32_t i = 0; i < count; ++i) keys[i] = i;
      return Outcome<std::uint32_t>::Multicast(std::move(keys));
    };
    if (const auto* warm = e.get<Warm>()) return all(warm->count);
    if (const auto* start = e.get<Start>()) return all(start->producers);
    return Outcome<std::uint32_t>::Default();
  });
}

/// What the observability cases turn on for the throughput stream (the dumper writes to /dev/null:
/// it formats every line, but the disk is not what is measured).
enum class Observe : std::uint8_t { Nothing, DumpAll, DumpLimited, Telemetry };

Figure elfin_throughput(std::uint32_t producers, std::uint64_t messages, bool direct, unsigned threads,
                        Observe observe = Observe::Nothing, bool stamped = false) {
  Topology topology;
  auto driver = topology.local("driver");
  auto producer_group = topology.local("producers");
  auto consumer = topology.local("consumer");
  driver.route_to(producer_group, filters::messages<Warm, Start>());
  driver.route_to(consumer, filters::messages<WhoAreYou>());
  const bool dumping = observe == Observe::DumpAll || observe == Observe::DumpLimited;
  producer_group.route_to(consumer, filters::messages<Item, StampedItem>());
  consumer.route_to(driver, filters::messages<Done>());
  driver.mount(ActorGroup().config<ThroughputConfig>().exec(throughput_driver_exec)).entrypoint();
  producer_group.mount(ActorGroup().router(producer_router()).exec(producer_exec));
  consumer.mount(ActorGroup().config<ConsumerConfig>().exec(consumer_exec));
  std::string config = fmt::format(
      "[driver]\nproducers = {}\nmessages = {}\ndirect = {}\nflush_dumps = {}\nstamped = {}\n"
      "[consumer]\nexpected = {}\n",
      producers, messages, direct, observe == Observe::DumpAll, stamped, std::uint64_t{producers} * messages);
  if (dumping) {
    auto dumpers = topology.local("system.dumpers");
    dumpers.mount(elfin::dumper::blueprint());
    driver.route_to(dumpers, filters::messages<elfin::dumper::FlushDumps>());
    config += "[system.dumpers]\npath = \"/dev/null\"\nwrite_interval = \"100ms\"\n";
    // Every message, or 1000 a second. The default limit (100000 a second, with one second's
    // worth as a burst) would let through only about an eighth of a million-message stream.
    // With every message dumped, the timed part includes writing them all (FlushDumps).
    const char* max_rate = observe == Observe::DumpAll ? "1000000000" : "1000";
    for (const char* group : {"driver", "producers", "consumer"}) {
      config += fmt::format("[{}.system.dumping]\nmax_rate = {}\n", group, max_rate);
    }
  }
  if (observe == Observe::Telemetry) {
    topology.local("system.telemeters").mount(elfin::telemeter::blueprint());
    config += "[system.telemeters]\nlisten = \"127.0.0.1:0\"\n";
  }
  return elfin_bench::run_elfin("throughput", std::move(topology), std::move(config), threads);
}

// --- dump_write -----------------------------------------------------------------------------------
// What the dumper's writer thread does with the dumps of the throughput stream, without the
// actors: `n` dumps of Item, half sent by `producers/0` and half received by the key-less
// `consumer` singleton (the body copied into the record, as it is for a message as small as Item),
// recorded by two threads (one each) into chunks of DumpStorage's size and
// handed over in batches of 64 chunks, as the dumper's drains do. The timed part is the writer's
// whole path: ordering each batch by time, one line per dump, 128 KiB writes to /dev/null, and
// destroying the dumps. Making the dumps is not timed.

Figure dump_write(std::uint64_t n) {
  static const std::string producers = "producers";
  static const std::string consumer = "consumer";
  const auto key = std::make_shared<const std::string>("0");
  constexpr std::size_t kChunkSize = dumping::DumpStorage::kChunkSize;
  constexpr std::size_t kChunksPerBatch = 64;
  const std::uint64_t base_ns = 1'795'341'600'000'000'000;

  std::vector<std::vector<dumping::DumpChunk>> batches;
  std::uint64_t made = 0;
  while (made < n) {
    // One drain: each thread's chunks in recording order, the sender's first (its shard's turn).
    const std::uint64_t pairs = std::min<std::uint64_t>((n - made) / 2, kChunksPerBatch / 2 * kChunkSize);
    std::vector<dumping::DumpChunk> batch;
    for (const bool sent : {true, false}) {
      for (std::uint64_t i = 0; i < pairs; ++i) {
        if (i % kChunkSize == 0) batch.emplace_back().dumps.reserve(kChunkSize);
        const std::uint64_t value = made / 2 + i;
        dumping::Dump& d = batch.back().add(sent ? key : nullptr);
        d.group = sent ? &producers : &consumer;
        d.sequence_no = value + 1;
        d.timestamp_ns = base_ns + value * 200 + (sent ? 0 : 90);  // received 90 ns after it was sent
        d.trace_id = TraceId{0x6448'0000'0000'0000 + value};
        d.thread_no = sent ? 1 : 2;
        d.direction = sent ? dumping::Direction::Out : dumping::Direction::In;
        d.vtable = &vtable_of<Item>();
        const Item item{value};  // copied into the record, as the recorder does with Item
        vtable_of<Item>().copy_for_dump(&item, d.copied.data());
        d.body_copied = true;
      }
    }
    made += 2 * pairs;
    if (pairs == 0) break;  // an odd n: the last dump is left out
    batches.push_back(std::move(batch));
  }

  elfin::dumper::DumpFileWriter writer("/dev/null", 1, elfin::dumper::Config{}.max_body_size.bytes);
  const auto t0 = Clock::now();
  for (auto& batch : batches) writer.submit(std::move(batch));
  writer.flush();
  const auto t1 = Clock::now();
  const auto stats = writer.stats();
  if (stats.written != made || stats.lost != 0) {
    throw std::runtime_error(
        fmt::format("dump_write: {} written, {} lost of {}: {}", stats.written, stats.lost, made, stats.last_error));
  }
  return {elfin_bench::seconds_between(t0, t1), made};
}

// --- dump_floor -----------------------------------------------------------------------------------
// The least recording can cost with the book's fields: every dump has its own time (`ts`) and a
// sequence number unique in its group (`s`, shared by the group's actors on every thread: one
// atomic read-modify-write), and its record is written somewhere. Here that is all there is: the
// time comes from the clock dumps use (DumpStorage::now_ns: the TSC where the kernel trusts it,
// clock_gettime elsewhere), the record ring (1024 slots) stays in the cache, and nothing is locked,
// looked up or handed to a writer. Two dumps per op, as a message sent and received makes.
struct alignas(64) FloorRecord {
  std::uint64_t ts, sequence_no, trace_id, vtable, group, key, correlation_id, thread_and_flags;
  std::array<std::byte, 64> body;
};

Figure dump_floor(std::uint64_t n) {
  const elfin::dumping::DumpStorage clock(0, 1);  // calibrates the TSC where the kernel trusts it
  std::vector<FloorRecord> ring(1024);
  std::atomic<std::uint64_t> producers_seq{1};
  std::atomic<std::uint64_t> consumer_seq{1};
  auto record = [&](std::uint64_t i, std::atomic<std::uint64_t>& seq) {
    FloorRecord& r = ring[i % ring.size()];
    r.ts = clock.now_ns();
    r.sequence_no = seq.fetch_add(1, std::memory_order_relaxed);
    r.trace_id = i;
    r.vtable = r.group = r.key = 1;
    r.correlation_id = 0;
    r.thread_and_flags = 1;
    std::memcpy(r.body.data(), &i, sizeof i);
  };
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    record(2 * i, producers_seq);     // sent
    record(2 * i + 1, consumer_seq);  // received
  }
  const auto t1 = Clock::now();
  std::uint64_t check = 0;
  for (const auto& r : ring) check += r.sequence_no;
  if (check == 0) throw std::runtime_error("dump_floor: nothing recorded");
  return {elfin_bench::seconds_between(t0, t1), n};
}

// --- latency ------------------------------------------------------------------------------------
// Runs `run` once to warm up, then opts.reps times, each into a fresh histogram; prints the median
// (lower middle) of the runs' p50 and p99 and the range of the p99s.

bool run_latency_case(std::string_view name, const Options& o, const std::function<Figure()>& run) {
  try {
    LatencyHistogram histogram;
    auto once = [&] {
      histogram.clear();
      g_latency = &histogram;
      const Figure f = run();
      g_latency = nullptr;
      return f;
    };
    if (o.warmup) std::ignore = once();
    std::vector<std::uint64_t> p50s;
    std::vector<std::uint64_t> p99s;
    std::uint64_t samples = 0;
    for (unsigned i = 0; i < o.reps; ++i) {
      std::ignore = once();
      p50s.push_back(histogram.quantile(0.50));
      p99s.push_back(histogram.quantile(0.99));
      samples = histogram.total();
    }
    std::sort(p50s.begin(), p50s.end());
    std::sort(p99s.begin(), p99s.end());
    const std::size_t mid = (p50s.size() - 1) / 2;
    std::printf(
        "bench=%.*s case=%.*s elfin_p50_ns=%llu elfin_p99_ns=%llu elfin_p99_range=%llu..%llu samples=%llu "
        "reps=%u threads=%u\n",
        static_cast<int>(kBench.size()), kBench.data(), static_cast<int>(name.size()), name.data(),
        static_cast<unsigned long long>(p50s[mid]), static_cast<unsigned long long>(p99s[mid]),
        static_cast<unsigned long long>(p99s.front()), static_cast<unsigned long long>(p99s.back()),
        static_cast<unsigned long long>(samples), o.reps, o.threads);
    std::fflush(stdout);
    return true;
  } catch (const std::exception& e) {
    g_latency = nullptr;
    std::printf("bench=%.*s case=%.*s error=\"%s\"\n", static_cast<int>(kBench.size()), kBench.data(),
                static_cast<int>(name.size()), name.data(), e.what());
    std::fflush(stdout);
    return false;
  }
}

// --- flood_rss -----------------------------------------------------------------------------------
// One flood in a child process (fork), so its peak RSS is its own and not the benchmark's earlier
// cases': the child reads its VmRSS, runs the flood once, reports VmRSS before and ru_maxrss
// after through a pipe, and exits. Forked only between cases, when no system runs.

struct RssFigure {
  long before_kib = -1;
  long peak_kib = -1;
  double seconds = 0;
};

long vm_rss_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib;
}

RssFigure rss_of_child(const std::function<Figure()>& flood) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("flood_rss: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("flood_rss: fork failed");
  if (pid == 0) {
    close(fds[0]);
    RssFigure r;
    r.before_kib = vm_rss_kib();
    try {
      r.seconds = flood().seconds;
    } catch (...) {
      r.seconds = -1;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    r.peak_kib = usage.ru_maxrss;
    std::ignore = write(fds[1], &r, sizeof r);
    _exit(0);
  }
  close(fds[1]);
  RssFigure r;
  const auto got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof r) || r.seconds < 0) throw std::runtime_error("flood_rss: the child failed");
  return r;
}

bool flood_rss_case(const Options& o) {
  constexpr std::uint32_t kProducers = 64;
  const std::uint64_t per_producer = o.quick ? 10'000 : 100'000;
  const std::uint64_t total = kProducers * per_producer;
  try {
    const RssFigure ours = rss_of_child([&] { return elfin_throughput(kProducers, per_producer, false, o.threads); });
    std::string line =
        fmt::format("bench={} case=flood_rss elfin_peak_rss_kib={} elfin_rss_before_kib={} elfin_ops_per_s={:.0f}",
                    kBench, ours.peak_kib, ours.before_kib, static_cast<double>(total) / ours.seconds);
#if defined(ELFIN_HAVE_CAF)
    const RssFigure theirs = rss_of_child([&] {
      auto f = elfin_bench::caf_peer::throughput(kProducers, per_producer, o.threads);
      return Figure{f.seconds, f.ops};
    });
    line += fmt::format(" caf_peak_rss_kib={} caf_rss_before_kib={} caf_ops_per_s={:.0f}", theirs.peak_kib,
                        theirs.before_kib, static_cast<double>(total) / theirs.seconds);
#else
    line += " caf_peak_rss_kib=n/a";
#endif
    line += fmt::format(" ops={} producers={} threads={}", total, kProducers, o.threads);
    std::puts(line.c_str());
    std::fflush(stdout);
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%.*s case=flood_rss error=\"%s\"\n", static_cast<int>(kBench.size()), kBench.data(), e.what());
    std::fflush(stdout);
    return false;
  }
}

// --- injection_queue / handoff_queue ---------------------------------------------------------------
// `producers` threads push n pointers in all, `consumers` threads pop until all n are taken
// (spinning with a pause on empty, as a spinning worker polls). Timed from the start signal until
// the last item is popped.

struct LockedQueue {  // Scheduler's global queue: std::mutex + RingBuffer, length read unlocked
  std::mutex mu;
  elfin::detail::RingBuffer<void*> items;
  std::atomic<std::size_t> len{0};
  void push(void* p) {
    std::lock_guard lock(mu);
    items.push_back(p);
    len.fetch_add(1, std::memory_order_relaxed);
  }
  bool pop(void*& out) {
    if (len.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(mu);
    if (items.empty()) return false;
    len.fetch_sub(1, std::memory_order_relaxed);
    out = items.pop_front();
    return true;
  }
};

struct MoodycamelQueue {
  moodycamel::ConcurrentQueue<void*> items;
  void push(void* p) { items.enqueue(p); }
  bool pop(void*& out) { return items.try_dequeue(out); }
};

template <class Q>
Figure queue_run(unsigned producers, unsigned consumers, std::uint64_t n) {
  Q queue;
  std::atomic<bool> go{false};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<std::uint64_t> checksum{0};
  std::vector<std::thread> threads;
  threads.reserve(producers + consumers);
  for (unsigned p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      while (!go.load(std::memory_order_acquire)) {
      }
      // The items are numbers dressed as pointers (the queues hold void*); never dereferenced.
      // NOLINTNEXTLINE(performance-no-int-to-ptr)
      for (std::uint64_t i = p; i < n; i += producers) queue.push(reinterpret_cast<void*>(i + 1));
    });
  }
  for (unsigned c = 0; c < consumers; ++c) {
    threads.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      std::uint64_t sum = 0;
      while (taken.load(std::memory_order_relaxed) < n) {
        void* item = nullptr;
        if (queue.pop(item)) {
          sum += reinterpret_cast<std::uint64_t>(item);
          taken.fetch_add(1, std::memory_order_relaxed);
        } else {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
      checksum.fetch_add(sum);
    });
  }
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  const auto t1 = Clock::now();
  if (checksum.load() != elfin_bench::sum_below(n + 1)) throw std::runtime_error("queue: items lost or duplicated");
  return {elfin_bench::seconds_between(t0, t1), n};
}

bool queue_case(const Options& o, std::string_view name, unsigned producers, unsigned consumers) {
  const std::uint64_t n = o.quick ? 200'000 : 2'000'000;
  try {
    if (o.warmup) {
      std::ignore = queue_run<LockedQueue>(producers, consumers, n);
      std::ignore = queue_run<MoodycamelQueue>(producers, consumers, n);
    }
    std::vector<Figure> locked;
    std::vector<Figure> moody;
    for (unsigned i = 0; i < o.reps; ++i) {
      locked.push_back(queue_run<LockedQueue>(producers, consumers, n));
      moody.push_back(queue_run<MoodycamelQueue>(producers, consumers, n));
    }
    elfin_bench::print_line(
        kBench, name, elfin_bench::summarize(std::move(locked)), elfin_bench::summarize(std::move(moody)),
        fmt::format(" producers={} consumers={} reps={}", producers, consumers, o.reps), "moodycamel");
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%.*s case=%.*s error=\"%s\"\n", static_cast<int>(kBench.size()), kBench.data(),
                static_cast<int>(name.size()), name.data(), e.what());
    std::fflush(stdout);
    return false;
  }
}

// --- cases ---------------------------------------------------------------------------------------

struct Sizes {
  std::uint64_t round_trips;
  std::uint64_t requests;
  std::uint64_t messages;  ///< total per throughput case
};
Sizes sizes(const Options& o) {
  if (o.quick) return {20'000, 20'000, 100'000};
  return {200'000, 200'000, 1'000'000};
}

bool variant_is(const Options& o, std::string_view v) { return o.variant == v; }

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"ping_pong", "ping_pong", [](const Options& o) {
                   const auto n = sizes(o).round_trips;
                   const bool routed = variant_is(o, "routed");
                   std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                   caf = [&] {
                     auto f = elfin_bench::caf_peer::ping_pong(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                   so.run = [&] {
                     auto f = elfin_bench::so_peer::ping_pong(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   return elfin_bench::run_case(
                       kBench, "ping_pong", o, [&] { return elfin_ping_pong(n, routed, o.threads); }, caf,
                       routed ? " addressing=routed" : " addressing=direct", so);
                 }});
  out.push_back({"request_response", "request_response", [](const Options& o) {
                   const auto n = sizes(o).requests;
                   const bool direct = variant_is(o, "direct");
                   std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                   caf = [&] {
                     auto f = elfin_bench::caf_peer::request_response(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                   so.run = [&] {
                     auto f = elfin_bench::so_peer::request_response(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   return elfin_bench::run_case(
                       kBench, "request_response", o, [&] { return elfin_request_response(n, direct, o.threads); }, caf,
                       direct ? " addressing=direct" : " addressing=routed", so);
                 }});
  for (std::uint32_t producers : {1u, 2u, 4u, 8u, 64u}) {
    const std::string name = fmt::format("throughput_{}to1", producers);
    out.push_back({name, "throughput", [name, producers](const Options& o) {
                     const auto per_producer = sizes(o).messages / producers;
                     const bool direct = variant_is(o, "direct");
                     std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                     caf = [&] {
                       auto f = elfin_bench::caf_peer::throughput(producers, per_producer, o.threads);
                       return Figure{f.seconds, f.ops};
                     };
#endif
                     elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                     so.run = [&] {
                       auto f = elfin_bench::so_peer::throughput(producers, per_producer, o.threads);
                       return Figure{f.seconds, f.ops};
                     };
#endif
                     return elfin_bench::run_case(
                         kBench, name, o, [&] { return elfin_throughput(producers, per_producer, direct, o.threads); },
                         caf, direct ? " addressing=direct" : " addressing=routed", so);
                   }});
  }
  // elfin only: per-message latency (see the header comment for the method).
  out.push_back({"latency_ping_pong", "latency", [](const Options& o) {
                   const auto n = sizes(o).round_trips;
                   return run_latency_case("latency_ping_pong", o,
                                           [&] { return elfin_ping_pong(n, false, o.threads, true); });
                 }});
  out.push_back({"latency_8to1", "latency", [](const Options& o) {
                   const auto per_producer = sizes(o).messages / 8;
                   return run_latency_case("latency_8to1", o, [&] {
                     return elfin_throughput(8, per_producer, false, o.threads, Observe::Nothing, true);
                   });
                 }});
  out.push_back({"flood_rss", "flood_rss", [](const Options& o) { return flood_rss_case(o); }});
  // The scheduler's global queue against moodycamel's ConcurrentQueue, threads only (no actors).
  out.push_back({"injection_queue", "queues", [](const Options& o) { return queue_case(o, "injection_queue", 2, 2); }});
  out.push_back({"handoff_queue", "queues", [](const Options& o) { return queue_case(o, "handoff_queue", 1, 1); }});
  // elfin only: what routing costs on the same 1→1 stream.
  for (bool direct : {false, true}) {
    const std::string name = direct ? "direct_send" : "routed_send";
    out.push_back({name, "routed_vs_direct", [name, direct](const Options& o) {
                     const auto n = sizes(o).messages;
                     return elfin_bench::run_case(
                         kBench, name, o, [&] { return elfin_throughput(1, n, direct, o.threads); }, {},
                         direct ? " addressing=direct" : " addressing=routed");
                   }});
  }
  // elfin only: what dumping and telemetry cost on the 1→1 stream, next to the same stream with
  // them off (the `off_*` columns). Goals: dumping everything ≤ 30%, telemetry ≤ 10%.
  const std::pair<const char*, Observe> observed[] = {
      {"dumping_all", Observe::DumpAll}, {"dumping_limited", Observe::DumpLimited}, {"telemetry", Observe::Telemetry}};
  for (const auto& [suffix, observe] : observed) {
    const std::string name = fmt::format("throughput_1to1_{}", suffix);
    out.push_back({name, "observability", [name, mode = observe](const Options& o) {
                     const auto n = sizes(o).messages;
                     return elfin_bench::run_overhead_case(
                         kBench, name, o, [&] { return elfin_throughput(1, n, false, o.threads, mode); },
                         [&] { return elfin_throughput(1, n, false, o.threads); });
                   }});
  }
  // elfin only: how many dumps a second the dump writer turns into lines (the 1→1 stream with
  // every message dumped makes them faster than the writer used to).
  out.push_back({"dump_write", "dump_write", [](const Options& o) {
                   const auto n = sizes(o).messages;
                   return elfin_bench::run_case(kBench, "dump_write", o, [&] { return dump_write(n); }, {});
                 }});
  // elfin only: the floor under dumping everything (see dump_floor), to set against the 1→1
  // stream's time per message.
  out.push_back({"dump_floor", "dump_floor", [](const Options& o) {
                   const auto n = 10 * sizes(o).messages;
                   const bool ok = elfin_bench::run_case(kBench, "dump_floor", o, [&] { return dump_floor(n); }, {});
                   std::fprintf(stderr, "  dump_floor: the dumps' clock was %s\n",
                                elfin::detail::g_tsc_calibration.load() != nullptr
                                    ? "the TSC"
                                    : "clock_gettime (the kernel keeps time without the TSC)");
                   return ok;
                 }});
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
