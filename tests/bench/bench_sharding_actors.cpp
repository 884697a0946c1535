// bench_sharding_actors: what the sharding actors cost, in one process (bench_sharding measures
// the pure functions under them).
//
//   entity_send (family entity_vs_routed)   a driver `co_await ctx.send`s Add messages to 64
//                      entities of an entity group (actors/sharding `entities`, this pod owning
//                      every shard of jump-xxh64/1:1024), then asks each entity its count (the sum
//                      must be the number sent); next to the same stream to a plain group keyed by
//                      the entity id (MapRouter<std::string>), the `off_*` columns. ops = messages
//   manager_place_1024_on_10_pods / _100_ (family manager_place)   the shard manager (file storage,
//                      fsync) with 11 (101) fake pods registered; the first holds all 1024 shards
//                      and unregisters: timed from the Unregister until the other 10 (100) pods
//                      were sent AssignShards for all 1024 (removal saved, pings, the round's map
//                      saved, assigns). ops = rounds
//   kill_reassign_10_pods / _100_ (family kill_reassign)   10 (100) fake pods holding 1024 shards
//                      evenly; one pod's actor ends (its address reaches no one, as a killed
//                      process's) and another pod reports it: timed from the kill until its shards
//                      were sent to the others (health check, removal saved, round). Detection by
//                      the network (a closed connection) is not in it. ops = reassignments
//   handoff_gap (family handoff)   a rolling update's step in one process: a shard manager (file
//                      storage, fsync) and two pods (`sharding.pod` groups, each with an entity
//                      group of counters); the first pod to register holds all 1024 shards. A
//                      driver asks 32 entities their count in turn without pause, each through the
//                      first pod's entity group and, when refused, the second's; after 50 rounds the
//                      first pod is stopped gracefully (the pod a rolling update replaces: its
//                      entities stop, it unregisters, the manager moves its shards at once). Per
//                      entity, the gap is from the last request the old pod's entity served to the
//                      first the new pod's served (entity-side time stamps; resolution: one round of
//                      32 requests, or 1 ms while no entity answers). The line's figure is the median gap of a run (ops
//                      = 1 handoff, ns/op = the gap); `gap_p50_ms` / `gap_max_ms` are over every entity of every
//                      measured run. Akka reports 10-30 s for the same (entities unavailable during
//                      a rolling update's handoffs).
//
// The fake pods answer PingPod, AssignShards and UnassignShards at once and count the shards they
// were sent; the one whose AssignShards completes the count reports the figure. There is no CAF
// peer (caf_ops_per_s=n/a).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/elfin.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/protocols/sharding.hpp>

#include "bench_common.hpp"
#include "bench_counter_entity.hpp"

namespace {

using elfin::ActorGroup;
using elfin::Addr;
using elfin::Context;
using elfin::Envelope;
using elfin::NoConfig;
using elfin::ResponseToken;
using elfin::Task;
using elfin::Topology;
using elfin_bench::Figure;
using elfin_bench::Options;
using elfin_bench::report;
using elfin_bench::report_error;
using Clock = std::chrono::steady_clock;
namespace ps = elfin::protocols::sharding;
namespace sharding = elfin::actors::sharding;

constexpr std::string_view kBench = "sharding_actors";
constexpr const char* kFunction = "jump-xxh64/1:1024";
constexpr std::uint32_t kShards = 1024;

struct Tick {
  ELFIN_MESSAGE(bench_sharding, Tick);
};

/// Waits `period` (a Delay's message): how the drivers poll without holding a worker.
template <class C>
Task<bool> pause(Context<C> ctx, std::chrono::milliseconds period) {
  ctx.attach(elfin::Delay(period, Tick{}));
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->template is<Tick>()) co_return true;
  }
  co_return false;
}

template <class C>
Task<> idle_until_closed(Context<C> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

// --- entity_vs_routed ---------------------------------------------------------------------------

using elfin_bench::Add;
using elfin_bench::Count;
using elfin_bench::counter_exec;
using elfin_bench::counter_id;

struct StreamConfig {
  std::uint64_t messages = 0;
  std::uint32_t keys = 64;
  ELFIN_CONFIG(messages, keys);
};

Task<> stream_driver(Context<StreamConfig> ctx) {
  const auto cfg = ctx.config();
  std::vector<std::string> ids;
  ids.reserve(cfg.keys);
  for (std::uint32_t i = 0; i < cfg.keys; ++i) ids.push_back(fmt::format("cart-{}", i));
  for (const auto& id : ids) {  // untimed: every counter started
    auto started = co_await ctx.request(Count{id});
    if (!started) co_return report_error(elfin_bench::error_text("driver: first Count", started.error()));
  }
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < cfg.messages; ++i) {
    auto sent = co_await ctx.send(Add{ids[i % ids.size()]});
    if (!sent) co_return report_error(elfin_bench::error_text("driver: Add", sent.error()));
  }
  std::uint64_t total = 0;
  for (const auto& id : ids) {  // per-sender order: each answer comes after that entity's Adds
    auto count = co_await ctx.request(Count{id});
    if (!count) co_return report_error(elfin_bench::error_text("driver: Count", count.error()));
    total += *count;
  }
  const auto t1 = Clock::now();
  if (total != cfg.messages) co_return report_error(fmt::format("counted {} of {} Adds", total, cfg.messages));
  report({elfin_bench::seconds_between(t0, t1), cfg.messages});
  co_await idle_until_closed(ctx);
}

/// A cache that owns every shard, as a pod's does once the manager assigned it all.
std::shared_ptr<sharding::AssignmentCache> owning_cache() {
  auto function = *elfin::hashing::ShardFunction::parse(kFunction);
  auto cache = std::make_shared<sharding::AssignmentCache>();
  const ps::PodRef self{"bench:1", 1};
  cache->set_self(self, 1);
  ps::Assignments map;
  map.epoch = 1;
  map.shard_function = kFunction;
  map.first_shard = function.first_shard();
  map.pods = {ps::PodEntry{self, 1, "1.0.0"}};
  map.owners.assign(function.shard_count(), 0);
  std::vector<std::uint32_t> shards;
  for (std::uint32_t s = function.first_shard(); s <= function.last_shard(); ++s) shards.push_back(s);
  if (!cache->apply(map) || !cache->assign(self, shards, 1)) throw std::runtime_error("cannot fill the cache");
  return cache;
}

Figure elfin_stream(bool entities, std::uint64_t messages, unsigned threads) {
  Topology topology;
  auto driver = topology.local("driver");
  auto counters = topology.local("counters");
  driver.route_to(counters, elfin::filters::messages<Add, Count>());
  driver.mount(ActorGroup().config<StreamConfig>().exec(stream_driver)).entrypoint();
  if (entities) {
    sharding::EntityOptions options;
    options.cache = owning_cache();
    options.shard_function = kFunction;
    options.entity_id = counter_id;
    counters.mount(sharding::entities(std::move(options), counter_exec));
  } else {
    counters.mount(ActorGroup()
                       .router(elfin::MapRouter<std::string>([](const Envelope& e) {
                         auto id = counter_id(e);
                         if (!id) return elfin::Outcome<std::string>::Default();
                         return elfin::Outcome<std::string>::Unicast(std::move(*id));
                       }))
                       .exec(counter_exec));
  }
  return elfin_bench::run_elfin(entities ? "entity_send" : "routed_send", std::move(topology),
                                fmt::format("[driver]\nmessages = {}\n", messages), threads);
}

// --- the manager with fake pods -------------------------------------------------------------------

/// What the fake pods were sent in the timed part; the pod completing `target` reports.
struct Progress {
  std::atomic<bool> armed{false};
  std::atomic<std::uint64_t> assigned{0};
  std::uint64_t target = 0;
  std::uint32_t excluded = ~0u;  ///< a pod whose assigns do not count (the one leaving)
  Clock::time_point t0;
  std::vector<std::atomic<std::uint32_t>> held = std::vector<std::atomic<std::uint32_t>>(128);
};
Progress* progress = nullptr;  // the run's, set by main's thread before the system starts

struct StartPod {
  std::uint32_t key = 0;
  ELFIN_REQUEST(bench_sharding, StartPod, std::uint64_t, key);
};
struct KillPod {
  std::uint32_t key = 0;
  ELFIN_MESSAGE(bench_sharding, KillPod, key);
};

ps::PodRef pod_ref(std::uint32_t key) { return ps::PodRef{fmt::format("10.0.0.{}:9000", key), 1}; }

Task<> fake_pod(Context<NoConfig, std::uint32_t> ctx) {
  const std::uint32_t key = ctx.key();
  const ps::PodRef me = pod_ref(key);
  bool killed = false;
  while (!killed) {
    auto envelope = co_await ctx.recv();
    if (!envelope) break;
    co_await elfin::handle(
        *envelope,
        [&](const StartPod&, ResponseToken<StartPod> token) { ctx.respond(std::move(token), ctx.addr().raw()); },
        [&](const KillPod&) { killed = true; },
        [&](const ps::PingPod&, ResponseToken<ps::PingPod> token) { ctx.respond(std::move(token), me); },
        [&](const ps::UnassignShards& unassign, ResponseToken<ps::UnassignShards> token) {
          progress->held[key] -= static_cast<std::uint32_t>(unassign.shards.size());
          ctx.respond(std::move(token), elfin::Unit{});
        },
        [&](const ps::AssignShards& assign, ResponseToken<ps::AssignShards> token) {
          progress->held[key] += static_cast<std::uint32_t>(assign.shards.size());
          ctx.respond(std::move(token), elfin::Unit{});
          if (!progress->armed.load() || key == progress->excluded) return;
          const auto total = progress->assigned.fetch_add(assign.shards.size()) + assign.shards.size();
          if (total >= progress->target && progress->armed.exchange(false)) {
            report({elfin_bench::seconds_between(progress->t0, Clock::now()), 1});
          }
        });
  }
}

struct ManagerCaseConfig {
  std::uint32_t pods = 10;
  bool kill = false;  ///< kill_reassign; else manager_place
  ELFIN_CONFIG(pods, kill);
};

Task<> manager_driver(Context<ManagerCaseConfig> ctx) {
  const auto cfg = ctx.config();
  // Pod 0 registers first and gets every shard; pods 1..N join empty (no regular round runs).
  std::vector<std::uint64_t> addrs;
  for (std::uint32_t key = 0; key <= cfg.pods; ++key) {
    auto addr = co_await ctx.request(StartPod{key});
    if (!addr) co_return report_error(elfin_bench::error_text("driver: StartPod", addr.error()));
    addrs.push_back(*addr);
    auto registered = co_await ctx.request(ps::Register{pod_ref(key), *addr, "1.0.0", kFunction});
    if (!registered || !*registered) co_return report_error(fmt::format("driver: register of pod {} failed", key));
    while (key == 0 && progress->held[0].load() < kShards) {
      if (!co_await pause(ctx, std::chrono::milliseconds{1})) co_return;
    }
  }
  // manager_place: pod 0 leaves; its 1024 shards go to the N others in one immediate round.
  if (!cfg.kill) {
    progress->target = kShards;
    progress->excluded = 0;
    progress->t0 = Clock::now();
    progress->armed = true;
  }
  auto left = co_await ctx.request(ps::Unregister{pod_ref(0)});
  if (!left || !*left) co_return report_error("driver: unregister of pod 0 failed");
  if (cfg.kill) {
    // kill_reassign: the N pods hold 1024 shards evenly; pod 1 dies and pod 2 reports it.
    while (true) {
      std::uint32_t held = 0;
      for (std::uint32_t key = 1; key <= cfg.pods; ++key) held += progress->held[key].load();
      if (held == kShards) break;
      if (!co_await pause(ctx, std::chrono::milliseconds{1})) co_return;
    }
    progress->target = progress->held[1].load();
    progress->excluded = 1;
    progress->t0 = Clock::now();
    progress->armed = true;
    if (auto sent = co_await ctx.send(KillPod{1}); !sent) {
      co_return report_error(elfin_bench::error_text("driver: KillPod", sent.error()));
    }
    while (true) {  // gone once its address reaches no one
      auto answer = co_await ctx.request_to(Addr{addrs[1]}, ps::PingPod{});
      if (!answer) break;
    }
    std::ignore = co_await ctx.send(ps::ReportUnhealthyPod{pod_ref(1), pod_ref(2)});
  }
  co_await idle_until_closed(ctx);
}

Figure elfin_manager(std::uint32_t pods, bool kill, unsigned threads) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("elfin-bench-shards-{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Progress run;
  progress = &run;
  Topology topology;
  auto driver = topology.local("driver");
  auto manager = topology.local("sharding.manager");
  auto fake_pods = topology.local("pods");
  driver.route_to(manager, elfin::filters::protocol("sharding"));
  driver.route_to(fake_pods, elfin::filters::messages<StartPod, KillPod>());
  driver.mount(ActorGroup().config<ManagerCaseConfig>().exec(manager_driver)).entrypoint();
  manager.mount(elfin::actors::shard_manager::blueprint());
  fake_pods.mount(ActorGroup()
                      .router(elfin::MapRouter<std::uint32_t>([](const Envelope& e) {
                        if (const auto* start = e.get<StartPod>()) {
                          return elfin::Outcome<std::uint32_t>::Unicast(start->key);
                        }
                        if (const auto* kill = e.get<KillPod>()) {
                          return elfin::Outcome<std::uint32_t>::GentleUnicast(kill->key);
                        }
                        return elfin::Outcome<std::uint32_t>::Default();
                      }))
                      .exec(fake_pod));
  const std::string config = fmt::format(R"([driver]
pods = {}
kill = {}

[sharding.manager]
shard_function = "{}"
rebalance_interval = "1h"
rebalance_retry_interval = "1h"
health_check_interval = "1h"
ping_timeout = "5s"
rebalance_rate = 1.0
storage.path = "{}"
)",
                                         pods, kill, kFunction, (dir / "shards.state").string());
  auto figure = elfin_bench::run_elfin(kill ? "kill_reassign" : "manager_place", std::move(topology), config, threads);
  progress = nullptr;
  std::filesystem::remove_all(dir);
  return figure;
}

// --- handoff ---------------------------------------------------------------------------------------

constexpr std::uint32_t kGapEntities = 32;

/// When each pod's entities served requests: nanoseconds since the run's start, per entity.
struct Served {
  Clock::time_point t0 = Clock::now();
  std::array<std::array<std::atomic<std::int64_t>, kGapEntities>, 2> last{};
  std::array<std::array<std::atomic<std::int64_t>, kGapEntities>, 2> first{};
  std::vector<double> gaps_ms;  ///< filled by the driver at the end of the run
};
Served* served = nullptr;  // the run's, set by main's thread before the system starts

std::int64_t served_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - served->t0).count();
}

Task<> handoff_counter(Context<NoConfig, std::string> ctx, std::size_t pod) {
  const auto index = static_cast<std::size_t>(std::stoul(ctx.key().substr(ctx.key().find('-') + 1)));
  std::uint64_t count = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(
        *envelope, [&](const Add&) { ++count; },
        [&](const Count&, ResponseToken<Count> token) {
          const std::int64_t now = served_now();
          served->last[pod][index].store(now);
          std::int64_t unset = 0;
          served->first[pod][index].compare_exchange_strong(unset, now);
          ctx.respond(std::move(token), count);
        });
  }
}

struct HandoffConfig {
  std::uint32_t rounds_before = 50;
  ELFIN_CONFIG(rounds_before);
};

Task<> handoff_driver(Context<HandoffConfig> ctx, std::array<std::shared_ptr<sharding::AssignmentCache>, 2> caches) {
  // The first pod to register gets every shard (no regular round runs).
  std::size_t old = 2;
  const auto wait_until = Clock::now() + std::chrono::seconds{30};
  while (old == 2) {
    for (std::size_t p = 0; p < 2; ++p) {
      if (caches[p]->owned().size() == kShards && caches[p]->group(fmt::format("counters{}", p + 1)) != 0 &&
          caches[1 - p]->group(fmt::format("counters{}", 2 - p)) != 0) {
        old = p;
      }
    }
    if (Clock::now() > wait_until) co_return report_error("no pod got the shards within 30 s");
    if (old == 2 && !co_await pause(ctx, std::chrono::milliseconds{1})) co_return;
  }
  const std::size_t fresh = 1 - old;
  const Addr to_old{caches[old]->group(fmt::format("counters{}", old + 1))};
  const Addr to_new{caches[fresh]->group(fmt::format("counters{}", fresh + 1))};
  std::vector<std::string> ids;
  ids.reserve(kGapEntities);
  for (std::uint32_t i = 0; i < kGapEntities; ++i) ids.push_back(fmt::format("cart-{}", i));
  bool stopped = false;
  const auto deadline = Clock::now() + std::chrono::seconds{60};
  for (std::uint32_t round = 0;; ++round) {
    std::uint32_t answered = 0;
    for (const auto& id : ids) {
      auto answer = co_await ctx.request_to(to_old, Count{id});
      if (!answer) answer = co_await ctx.request_to(to_new, Count{id});
      answered += answer ? 1 : 0;
    }
    // Nobody serves while the shards move: poll every millisecond rather than spin.
    if (answered == 0 && !co_await pause(ctx, std::chrono::milliseconds{1})) co_return;
    if (round == ctx.config().rounds_before) {
      // The rolling update replaces the old pod: a graceful stop of its sharding actor.
      std::ignore = ctx.unbounded_send_to(Addr{caches[old]->endpoint()}, elfin::Terminate{});
      stopped = true;
    }
    if (stopped && std::all_of(served->first[fresh].begin(), served->first[fresh].end(),
                               [](const auto& t) { return t.load() != 0; })) {
      break;
    }
    if (Clock::now() > deadline) co_return report_error("the new pod did not serve every entity within 60 s");
  }
  std::vector<double> gaps;
  for (std::uint32_t i = 0; i < kGapEntities; ++i) {
    const std::int64_t last_old = served->last[old][i].load();
    const std::int64_t first_new = served->first[fresh][i].load();
    if (last_old == 0 || first_new <= last_old) co_return report_error(fmt::format("entity {}: no handoff seen", i));
    gaps.push_back(static_cast<double>(first_new - last_old) / 1e6);
  }
  served->gaps_ms = gaps;
  std::sort(gaps.begin(), gaps.end());
  report({gaps[(gaps.size() - 1) / 2] / 1e3, 1});
  co_await idle_until_closed(ctx);
}

Figure handoff_run(unsigned threads, std::vector<double>& all_gaps) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("elfin-bench-handoff-{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Served run;
  served = &run;
  std::array<std::shared_ptr<sharding::AssignmentCache>, 2> caches{std::make_shared<sharding::AssignmentCache>(),
                                                                   std::make_shared<sharding::AssignmentCache>()};
  Topology topology;
  auto manager = topology.local("sharding.manager");
  manager.mount(elfin::actors::shard_manager::blueprint());
  std::string config = fmt::format(R"([sharding.manager]
shard_function = "{}"
rebalance_interval = "1h"
rebalance_retry_interval = "100ms"
health_check_interval = "1h"
ping_timeout = "1s"
rebalance_rate = 1.0
storage.path = "{}"
)",
                                   kFunction, (dir / "shards.state").string());
  for (std::size_t p = 0; p < 2; ++p) {
    auto pod = topology.local(fmt::format("pod{}", p + 1));
    pod.mount(sharding::pod({caches[p], 100 + p}));
    pod.route_to(manager, elfin::filters::protocol("sharding"));
    sharding::EntityOptions options;
    options.cache = caches[p];
    options.shard_function = kFunction;
    options.entity_id = counter_id;
    topology.local(fmt::format("counters{}", p + 1))
        .mount(sharding::entities(std::move(options),
                                  [p](Context<NoConfig, std::string> ctx) { return handoff_counter(ctx, p); }));
    config += fmt::format(R"(
[pod{}]
address = "pod-{}"
shard_function = "{}"
retry_interval = "20ms"
)",
                          p + 1, p + 1, kFunction);
  }
  topology.local("driver")
      .mount(ActorGroup().config<HandoffConfig>().exec(
          [caches](Context<HandoffConfig> ctx) { return handoff_driver(ctx, caches); }))
      .entrypoint();
  auto figure = elfin_bench::run_elfin("handoff_gap", std::move(topology), config, threads);
  all_gaps.insert(all_gaps.end(), run.gaps_ms.begin(), run.gaps_ms.end());
  served = nullptr;
  std::filesystem::remove_all(dir);
  return figure;
}

bool handoff_case(const Options& o) {
  try {
    std::vector<double> warmup;
    if (o.warmup) handoff_run(o.threads, warmup);
    std::vector<double> gaps;
    std::vector<Figure> figures;
    figures.reserve(o.reps);
    for (unsigned r = 0; r < o.reps; ++r) figures.push_back(handoff_run(o.threads, gaps));
    std::sort(gaps.begin(), gaps.end());
    const double p50 = gaps[(gaps.size() - 1) / 2];
    elfin_bench::print_line(kBench, "handoff_gap", elfin_bench::summarize(figures), std::nullopt,
                            fmt::format(" gap_p50_ms={:.2f} gap_max_ms={:.2f} entities={} runs={} akka_reported=10-30s",
                                        p50, gaps.back(), kGapEntities, o.reps));
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%s case=handoff_gap error=%s\n", std::string(kBench).c_str(), e.what());
    return false;
  }
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"entity_send", "entity_vs_routed", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 20'000 : 400'000;
                   return elfin_bench::run_overhead_case(
                       kBench, "entity_send", o, [&] { return elfin_stream(true, n, o.threads); },
                       [&] { return elfin_stream(false, n, o.threads); });
                 }});
  for (std::uint32_t pods : {10u, 100u}) {
    const std::string place = fmt::format("manager_place_1024_on_{}_pods", pods);
    out.push_back({place, "manager_place", [place, pods](const Options& o) {
                     return elfin_bench::run_case(
                         kBench, place, o, [&] { return elfin_manager(pods, false, o.threads); }, {}, " storage=file");
                   }});
  }
  for (std::uint32_t pods : {10u, 100u}) {
    const std::string kill = fmt::format("kill_reassign_{}_pods", pods);
    out.push_back({kill, "kill_reassign", [kill, pods](const Options& o) {
                     return elfin_bench::run_case(
                         kBench, kill, o, [&] { return elfin_manager(pods, true, o.threads); }, {},
                         " storage=file detection=excluded");
                   }});
  }
  out.push_back({"handoff_gap", "handoff", handoff_case});
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
