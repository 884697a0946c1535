// bench_actors: creating, finishing and addressing many actors, side by side with the CAF and
// SObjectizer peers.
//
//   spawn        a driver keeps at most 64 short-lived actors in flight; each is started by a
//                Unicast to a new key of a keyed group, answers its one Job and ends; ops = actors
//   skynet       10-ary tree of 1,000,000 leaves (1,111,111 actors), leaves answer their ordinal,
//                parents sum; the sum must be 499999500000; ops = actors
//   fan_out_10k  10,000 actors started once (untimed); then each round sends every actor one
//                message, each answers, and the round ends when all answers are in;
//                ops = actors * rounds
//   fan_out_1k   the same with 1,000 actors (CAF 0.17's work stealing degrades at 10k)
//
// Actors are elfin's keyed-group actors: a key that nobody has yet starts an actor (Unicast /
// Multicast), and an actor whose exec returns is gone (its key and address are free again).
//
// Designs, and why (alternatives stay selectable with --variant for comparison):
//   skynet  (default `multicast`) node k is the actor with key k of group "skynet" (heap
//           numbering: the children of k are 10k+1 .. 10k+10, the root is 0). A node starts its
//           ten children with ONE `send_to(own group, Spawn{10k+1, 10})` that the group's router
//           turns into a Multicast: one envelope, one router call, ten mailboxes. Each child
//           answers its parent with `send_to(parent address)` — the address comes for free as
//           the Spawn's sender — then returns. A group may not route to itself in the topology,
//           so the group address is the honest way to reach siblings' children.
//           `unicast`: ten Spawns of one key each (ten envelopes and router calls).
//           `request`: `co_await request_to(own group, Sum{..}).all()`, answers by respond().
//   fan_out (default `multicast`) one `ctx.send(Round)` that the router multicasts to every
//           worker; workers answer with `send_to(driver)`. The driver's mailbox holds a whole
//           round's answers (`system.mailbox.capacity` = actors), the configuration an elfin
//           user gives a collector; with the default 100 the workers would queue for room.
//           `unicast`: one `send_to(worker address)` per worker (addresses learnt untimed).
//           `request`: `co_await ctx.request(Round).all()` (answers bypass the mailbox).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

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

constexpr std::string_view kBench = "actors";

// Keeps a driver alive (and answering Ping) until termination closes its mailbox.
// (`while (co_await ctx.recv())` without a variable miscompiled with g++ 12 in a nested Task.)
template <class Ctx>
Task<> idle_until_closed(Ctx ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

// Multicast outcome for keys first .. first+count-1.
template <class K>
Outcome<K> key_range(std::uint64_t first, std::uint64_t count) {
  if (count == 1) return Outcome<K>::Unicast(static_cast<K>(first));
  std::vector<K> keys(count);
  for (std::uint64_t i = 0; i < count; ++i) keys[i] = static_cast<K>(first + i);
  return Outcome<K>::Multicast(std::move(keys));
}

// --- spawn ------------------------------------------------------------------------------------------

struct Job {
  std::uint64_t ordinal = 0;
  ELFIN_MESSAGE(bench_actors, Job, ordinal);
};
struct Answer {
  std::uint64_t ordinal = 0;
  ELFIN_MESSAGE(bench_actors, Answer, ordinal);
};

struct SpawnConfig {
  std::uint64_t actors = 0;
  std::uint64_t window = 64;  ///< spawned-but-unanswered actors at most (the CAF peer's kSpawnWindow)
  ELFIN_CONFIG(actors, window);
};

Task<> spawner_exec(Context<SpawnConfig> ctx) {
  const SpawnConfig cfg = ctx.config();
  const auto t0 = Clock::now();
  std::uint64_t next = 0;
  std::uint64_t answers = 0;
  std::uint64_t checksum = 0;
  for (; next < cfg.actors && next < cfg.window; ++next) {
    if (auto sent = co_await ctx.send(Job{next}); !sent)
      co_return report_error(error_text("spawner: Job", sent.error()));
  }
  while (answers < cfg.actors) {
    auto envelope = co_await ctx.recv();
    if (!envelope) co_return;
    const Answer* answer = envelope->get<Answer>();
    if (answer == nullptr) continue;  // the start-up ConfigUpdated
    checksum += answer->ordinal;
    ++answers;
    if (next < cfg.actors) {
      if (auto sent = co_await ctx.send(Job{next++}); !sent) {
        co_return report_error(error_text("spawner: Job", sent.error()));
      }
    }
  }
  const auto t1 = Clock::now();
  if (checksum != elfin_bench::sum_below(cfg.actors)) {
    co_return report_error(fmt::format("spawner: checksum {} != {}", checksum, elfin_bench::sum_below(cfg.actors)));
  }
  report({elfin_bench::seconds_between(t0, t1), cfg.actors});
  co_await idle_until_closed(ctx);
}

// One Job, one Answer, then the actor ends.
// (An actor started before the runtime broadcast the group's start-up UpdateConfig also gets a
// ConfigUpdated: the driver's group is the entrypoint and starts first. Hence the skipping loops.)
Task<> spawned_exec(Context<NoConfig, std::uint64_t> ctx) {
  std::optional<Envelope> envelope;
  do {
    envelope = co_await ctx.recv();
    if (!envelope) co_return;
  } while (!envelope->is<Job>());
  if (const Job* job = envelope->get<Job>()) {
    const std::uint64_t ordinal = job->ordinal;
    if (ordinal != ctx.key()) report_error(fmt::format("actor {} got Job {}", ctx.key(), ordinal));
    if (auto sent = co_await ctx.send_to(envelope->sender(), Answer{ordinal}); !sent) {
      report_error(error_text("spawned: Answer", sent.error()));
    }
  }
}

Figure elfin_spawn(std::uint64_t actors, unsigned threads) {
  Topology topology;
  auto driver = topology.local("spawner");
  auto workers = topology.local("workers");
  driver.route_to(workers, filters::messages<Job>());
  driver.mount(ActorGroup().config<SpawnConfig>().exec(spawner_exec)).entrypoint();
  workers.mount(ActorGroup()
                    .router(MapRouter<std::uint64_t>([](const Envelope& e) {
                      if (const Job* job = e.get<Job>()) return Outcome<std::uint64_t>::Unicast(job->ordinal);
                      return Outcome<std::uint64_t>::Default();
                    }))
                    .exec(spawned_exec));
  return elfin_bench::run_elfin("spawn", std::move(topology), fmt::format("[spawner]\nactors = {}\n", actors), threads);
}

// --- skynet -----------------------------------------------------------------------------------------

/// Starts the nodes first .. first+count-1 (one envelope for all of them).
struct Spawn {
  std::uint64_t first = 0;
  std::uint64_t count = 1;
  ELFIN_MESSAGE(bench_actors, Spawn, first, count);
};
/// A subtree's sum, sent to the parent.
struct Partial {
  std::uint64_t sum = 0;
  ELFIN_MESSAGE(bench_actors, Partial, sum);
};
/// The `request` variant's Spawn: answered with the subtree's sum.
struct Sum {
  std::uint64_t first = 0;
  std::uint64_t count = 1;
  ELFIN_REQUEST(bench_actors, Sum, std::uint64_t, first, count);
};

constexpr std::uint64_t kFanout = 10;

struct SkynetConfig {
  std::uint32_t depth = 6;  ///< levels below the root; 10^depth leaves
  std::string variant = "multicast";
  ELFIN_CONFIG(depth, variant);
};

std::uint64_t pow10(std::uint32_t e) {
  std::uint64_t r = 1;
  for (std::uint32_t i = 0; i < e; ++i) r *= 10;
  return r;
}
/// Heap numbering: the first leaf's key is 1 + 10 + ... + 10^(depth-1).
std::uint64_t first_leaf(std::uint32_t depth) { return (pow10(depth) - 1) / 9; }
std::uint64_t skynet_actors(std::uint32_t depth) { return (pow10(depth + 1) - 1) / 9; }

Task<> skynet_node_exec(Context<SkynetConfig, std::uint64_t> ctx) {
  const std::uint64_t id = ctx.key();
  const std::uint64_t leaf0 = first_leaf(ctx.config().depth);
  const bool by_request = ctx.config().variant == "request";
  const bool by_unicast = ctx.config().variant == "unicast";
  std::optional<Envelope> envelope;
  do {
    envelope = co_await ctx.recv();
    if (!envelope) co_return;
  } while (!envelope->is<Spawn>() && !envelope->is<Sum>());

  if (by_request) {
    std::optional<ResponseToken<Sum>> token;
    co_await handle(*envelope, [&](const Sum&, ResponseToken<Sum> t) { token.emplace(std::move(t)); });
    if (!token) co_return report_error(fmt::format("node {}: expected Sum, got {}", id, envelope->name()));
    if (id >= leaf0) co_return ctx.respond(std::move(*token), id - leaf0);
    auto answers = co_await ctx.request_to(ctx.group_addr(), Sum{kFanout * id + 1, kFanout}).all();
    std::uint64_t sum = 0;
    for (const auto& answer : answers) {
      if (!answer) co_return report_error(error_text(fmt::format("node {}: child", id), answer.error()));
      sum += *answer;
    }
    if (answers.size() != kFanout) co_return report_error(fmt::format("node {}: {} answers", id, answers.size()));
    co_return ctx.respond(std::move(*token), sum);
  }

  if (!envelope->is<Spawn>())
    co_return report_error(fmt::format("node {}: expected Spawn, got {}", id, envelope->name()));
  const Addr parent = envelope->sender();
  envelope.reset();
  if (id >= leaf0) {
    if (auto sent = co_await ctx.send_to(parent, Partial{id - leaf0}); !sent) {
      report_error(error_text("leaf: Partial", sent.error()));
    }
    co_return;
  }
  const std::uint64_t first_child = kFanout * id + 1;
  if (by_unicast) {
    for (std::uint64_t i = 0; i < kFanout; ++i) {
      if (auto sent = co_await ctx.send_to(ctx.group_addr(), Spawn{first_child + i, 1}); !sent) {
        co_return report_error(error_text("node: Spawn", sent.error()));
      }
    }
  } else if (auto sent = co_await ctx.send_to(ctx.group_addr(), Spawn{first_child, kFanout}); !sent) {
    co_return report_error(error_text("node: Spawn", sent.error()));
  }
  std::uint64_t sum = 0;
  for (std::uint64_t pending = kFanout; pending > 0;) {
    auto answer = co_await ctx.recv();
    if (!answer) co_return;
    if (const Partial* partial = answer->get<Partial>()) {
      sum += partial->sum;
      --pending;
    }
  }
  if (auto sent = co_await ctx.send_to(parent, Partial{sum}); !sent)
    report_error(error_text("node: Partial", sent.error()));
}

Task<> skynet_driver_exec(Context<SkynetConfig> ctx) {
  const SkynetConfig cfg = ctx.config();
  const std::uint64_t want = elfin_bench::sum_below(pow10(cfg.depth));
  // Everything from here on is measured, including the start of the root (as in the CAF peer).
  const auto t0 = Clock::now();
  std::uint64_t sum = 0;
  if (cfg.variant == "request") {
    auto answer = co_await ctx.request(Sum{0, 1});
    if (!answer) co_return report_error(error_text("skynet root", answer.error()));
    sum = *answer;
  } else {
    if (auto sent = co_await ctx.send(Spawn{0, 1}); !sent)
      co_return report_error(error_text("driver: Spawn", sent.error()));
    for (;;) {
      auto envelope = co_await ctx.recv();
      if (!envelope) co_return;
      if (const Partial* partial = envelope->get<Partial>()) {
        sum = partial->sum;
        break;
      }
    }
  }
  const auto t1 = Clock::now();
  if (sum != want) co_return report_error(fmt::format("sum {} != {}", sum, want));
  report({elfin_bench::seconds_between(t0, t1), skynet_actors(cfg.depth)});
  co_await idle_until_closed(ctx);
}

Figure elfin_skynet(std::uint32_t depth, const std::string& variant, unsigned threads) {
  Topology topology;
  auto driver = topology.local("driver");
  auto nodes = topology.local("skynet");
  driver.route_to(nodes, filters::messages<Spawn, Sum>());
  driver.mount(ActorGroup().config<SkynetConfig>().exec(skynet_driver_exec)).entrypoint();
  nodes.mount(ActorGroup()
                  .config<SkynetConfig>()
                  .router(MapRouter<std::uint64_t>([](const Envelope& e) {
                    if (const Spawn* s = e.get<Spawn>()) return key_range<std::uint64_t>(s->first, s->count);
                    if (const Sum* s = e.get<Sum>()) return key_range<std::uint64_t>(s->first, s->count);
                    return Outcome<std::uint64_t>::Default();
                  }))
                  .exec(skynet_node_exec));
  const std::string section = fmt::format("depth = {}\nvariant = \"{}\"\n", depth, variant);
  return elfin_bench::run_elfin("skynet", std::move(topology),
                                fmt::format("[driver]\n{}[skynet]\n{}", section, section), threads);
}

// --- fan_out ----------------------------------------------------------------------------------------

/// Setup: starts workers 0..actors-1; each answers its address.
struct Hello {
  std::uint64_t actors = 0;
  ELFIN_REQUEST(bench_actors, Hello, std::uint64_t, actors);
};
/// One round to every worker (multicast variant: `actors` says whom).
struct Round {
  std::uint64_t round = 0;
  std::uint64_t actors = 0;
  ELFIN_MESSAGE(bench_actors, Round, round, actors);
};
/// The request variant's Round, answered with the round number.
struct RoundRequest {
  std::uint64_t round = 0;
  std::uint64_t actors = 0;
  ELFIN_REQUEST(bench_actors, RoundRequest, std::uint64_t, round, actors);
};
struct Reply {
  std::uint64_t round = 0;
  ELFIN_MESSAGE(bench_actors, Reply, round);
};

struct FanOutConfig {
  std::uint64_t actors = 0;
  std::uint64_t rounds = 0;
  std::string variant = "multicast";
  ELFIN_CONFIG(actors, rounds, variant);
};

Task<> fan_driver_exec(Context<FanOutConfig> ctx) {
  const FanOutConfig cfg = ctx.config();
  const bool unicast = cfg.variant == "unicast";
  const bool by_request = cfg.variant == "request";
  // Untimed: start every worker and learn its address.
  auto hellos = co_await ctx.request(Hello{cfg.actors}).all();
  std::vector<Addr> workers;
  workers.reserve(hellos.size());
  for (const auto& hello : hellos) {
    if (!hello) co_return report_error(error_text("driver: Hello", hello.error()));
    workers.emplace_back(*hello);
  }
  if (workers.size() != cfg.actors) {
    co_return report_error(fmt::format("driver: {} of {} workers answered Hello", workers.size(), cfg.actors));
  }

  const auto t0 = Clock::now();
  std::uint64_t replies = 0;
  std::uint64_t checksum = 0;
  for (std::uint64_t round = 0; round < cfg.rounds; ++round) {
    if (by_request) {
      auto answers = co_await ctx.request(RoundRequest{round, cfg.actors}).all();
      for (const auto& answer : answers) {
        if (!answer) co_return report_error(error_text("driver: RoundRequest", answer.error()));
        checksum += *answer;
        ++replies;
      }
      continue;
    }
    if (unicast) {
      for (Addr worker : workers) {
        if (auto sent = co_await ctx.send_to(worker, Round{round, 1}); !sent) {
          co_return report_error(error_text("driver: Round", sent.error()));
        }
      }
    } else if (auto sent = co_await ctx.send(Round{round, cfg.actors}); !sent) {
      co_return report_error(error_text("driver: Round", sent.error()));
    }
    for (std::uint64_t pending = cfg.actors; pending > 0;) {
      auto envelope = co_await ctx.recv();
      if (!envelope) co_return;
      if (const Reply* reply = envelope->get<Reply>()) {
        checksum += reply->round;
        ++replies;
        --pending;
      }
    }
  }
  const auto t1 = Clock::now();
  const std::uint64_t total = cfg.actors * cfg.rounds;
  if (replies != total || checksum != cfg.actors * elfin_bench::sum_below(cfg.rounds)) {
    co_return report_error(fmt::format("fan_out: {} replies (checksum {}), expected {} (checksum {})", replies,
                                       checksum, total, cfg.actors * elfin_bench::sum_below(cfg.rounds)));
  }
  report({elfin_bench::seconds_between(t0, t1), total});
  co_await idle_until_closed(ctx);
}

Task<> fan_worker_exec(Context<NoConfig, std::uint64_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const Round* round = envelope->get<Round>()) {
      const std::uint64_t r = round->round;
      if (auto sent = co_await ctx.send_to(envelope->sender(), Reply{r}); !sent) {
        report_error(error_text("worker: Reply", sent.error()));
      }
      continue;
    }
    co_await handle(
        *envelope, [&](const Hello&, ResponseToken<Hello> token) { ctx.respond(std::move(token), ctx.addr().raw()); },
        [&](const RoundRequest& r, ResponseToken<RoundRequest> token) { ctx.respond(std::move(token), r.round); });
  }
}

Figure elfin_fan_out(std::uint64_t actors, std::uint64_t rounds, const std::string& variant, unsigned threads) {
  Topology topology;
  auto driver = topology.local("driver");
  auto workers = topology.local("workers");
  driver.route_to(workers, filters::messages<Hello, Round, RoundRequest>());
  driver.mount(ActorGroup().config<FanOutConfig>().exec(fan_driver_exec)).entrypoint();
  workers.mount(ActorGroup()
                    .router(MapRouter<std::uint64_t>([](const Envelope& e) {
                      if (const Hello* h = e.get<Hello>()) return key_range<std::uint64_t>(0, h->actors);
                      if (const Round* r = e.get<Round>()) return key_range<std::uint64_t>(0, r->actors);
                      if (const RoundRequest* r = e.get<RoundRequest>()) return key_range<std::uint64_t>(0, r->actors);
                      return Outcome<std::uint64_t>::Default();
                    }))
                    .exec(fan_worker_exec));
  // The driver collects a whole round of Replies: its mailbox is sized for that.
  return elfin_bench::run_elfin(
      "fan_out", std::move(topology),
      fmt::format("[driver]\nactors = {}\nrounds = {}\nvariant = \"{}\"\nsystem.mailbox.capacity = {}\n", actors,
                  rounds, variant, std::max<std::uint64_t>(actors, 100)),
      threads);
}

// --- cases ------------------------------------------------------------------------------------------

std::string variant_or(const Options& o, std::string_view fallback) {
  return o.variant.empty() ? std::string(fallback) : o.variant;
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"spawn", "spawn", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 10'000 : 100'000;
                   std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                   caf = [&] {
                     auto f = elfin_bench::caf_peer::spawn(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                   so.run = [&] {
                     auto f = elfin_bench::so_peer::spawn(n, o.threads);
                     return Figure{f.seconds, f.ops};
                   };
#endif
                   return elfin_bench::run_case(
                       kBench, "spawn", o, [&] { return elfin_spawn(n, o.threads); }, caf, " window=64", so);
                 }});
  out.push_back({"skynet", "skynet", [](const Options& o) {
                   // The CAF peer's skynet is fixed at 10^6 leaves, so --quick (10^5) is elfin only.
                   const std::uint32_t depth = o.quick ? 5 : 6;
                   const std::string variant = variant_or(o, "multicast");
                   std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                   if (depth == 6) {
                     caf = [&] {
                       auto f = elfin_bench::caf_peer::skynet(o.threads);
                       return Figure{f.seconds, f.ops};
                     };
                   }
#endif
                   elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                   if (depth == 6) {
                     so.run = [&] {
                       auto f = elfin_bench::so_peer::skynet(o.threads);
                       return Figure{f.seconds, f.ops};
                     };
                   }
#endif
                   return elfin_bench::run_case(
                       kBench, "skynet", o, [&] { return elfin_skynet(depth, variant, o.threads); }, caf,
                       fmt::format(" leaves={} variant={}", pow10(depth), variant), so);
                 }});
  for (std::uint64_t actors : {std::uint64_t{10'000}, std::uint64_t{1'000}}) {
    const std::string name = actors == 10'000 ? "fan_out_10k" : "fan_out_1k";
    out.push_back({name, "fan_out", [name, actors](const Options& o) {
                     // Same number of messages per run for both sizes.
                     const std::uint64_t rounds = (o.quick ? 20'000 : 200'000) / actors;
                     const std::string variant = variant_or(o, "multicast");
                     std::function<Figure()> caf;
#if defined(ELFIN_HAVE_CAF)
                     caf = [&] {
                       auto f = elfin_bench::caf_peer::fan_out(actors, rounds, o.threads);
                       return Figure{f.seconds, f.ops};
                     };
#endif
                     elfin_bench::SoPeer so;
#if defined(ELFIN_HAVE_SOBJECTIZER)
                     so.run = [&] {
                       auto f = elfin_bench::so_peer::fan_out(actors, rounds, o.threads);
                       return Figure{f.seconds, f.ops};
                     };
#endif
                     return elfin_bench::run_case(
                         kBench, name, o, [&] { return elfin_fan_out(actors, rounds, variant, o.threads); }, caf,
                         fmt::format(" actors={} rounds={} variant={}", actors, rounds, variant), so);
                   }});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
