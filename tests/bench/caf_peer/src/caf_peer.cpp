// CAF 0.17 side of elfin's side-by-side benchmarks (see caf_peer.hpp).
//
// Conventions used by every workload below:
//  * Hot-path messages carry a single std::uint64_t and nothing else, so CAF
//    pays for the same payload as elfin's benchmark messages; control messages
//    (start/ready/stop/done) are tagged with atoms and are off the hot path.
//  * The measured part runs entirely inside the actor system. The main thread
//    only holds a caf::scoped_actor: it spawns (untimed) and, where an actor
//    does setup work of its own, waits for its `ready` handshake; then it
//    reads the clock, kicks the workload off, and reads the clock again when
//    the final `done` report arrives. System start-up and shutdown are never
//    timed.
//  * Actors never throw (an exception would just kill the actor and leave the
//    main thread waiting). They report a `failed` message instead, and the main
//    thread does all verification and throwing, after every actor has quit, so
//    the actor_system destructor (which waits for all actors) cannot hang.
#include "elfin_bench/caf_peer.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace elfin_bench::caf_peer {
namespace {

// -- message tags ------------------------------------------------------------
// CAF 0.17 dispatches on the static types of a message's elements, so distinct
// control messages need distinct atom types (atoms are at most 10 chars).
using start_atom = caf::atom_constant<caf::atom("start")>;
using ready_atom = caf::atom_constant<caf::atom("ready")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using more_atom = caf::atom_constant<caf::atom("more")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using failed_atom = caf::atom_constant<caf::atom("failed")>;

// -- helpers -----------------------------------------------------------------

// Final report of a workload as seen by the main thread.
struct Outcome {
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

// Makes a dynamically typed handle for `self` that can be passed to others.
template <class Self>
caf::actor handle_of(Self* self) {
  return caf::actor_cast<caf::actor>(self);
}

// Reports a failure to the main thread and terminates the reporting actor.
template <class Self>
void fail(Self* self, const caf::actor& report_to, std::string why) {
  self->send(report_to, failed_atom::value, std::move(why));
  self->quit();
}

// Builds an actor system with exactly `threads` scheduler (worker) threads,
// runs `workload(system, main_actor)` and returns its Figure. The system is
// destroyed (awaiting all actors) only after the workload has returned, and
// outside the measured window.
template <class Workload>
Figure with_system(const char* name, unsigned threads, Workload&& workload) {
  if (threads == 0) throw std::invalid_argument(std::string("caf.") + name + ": threads must be >= 1");
  caf::actor_system_config cfg;
  // "scheduler.max-threads" is the number of worker threads of CAF's default
  // work-stealing scheduler, read once at actor_system construction. It must
  // be set explicitly: 0.17's default is max(4, hardware threads), i.e. 4 on
  // a 2-core box. CAF additionally runs non-worker helper threads (0.17.6:
  // "caf.clock" for timeouts and one "caf.actor" thread; the workers
  // are oddly named "caf.multiplexer"); those do not execute our actors.
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(threads));
  caf::actor_system system{cfg};
  Figure figure{};
  {
    caf::scoped_actor self{system};
    figure = workload(system, self);
  }
  return figure;
}

// Blocks the main thread until the workload's final report arrives.
Outcome await_outcome(const char* name, caf::scoped_actor& self) {
  Outcome out;
  std::string failure;
  self->receive([&](done_atom, std::uint64_t count, std::uint64_t checksum) { out = Outcome{count, checksum}; },
                [&](failed_atom, const std::string& why) { failure = why; });
  if (!failure.empty()) throw std::runtime_error(std::string("caf.") + name + ": " + failure);
  return out;
}

// Blocks the main thread until a setup-phase `ready` handshake arrives.
void await_ready(caf::scoped_actor& self) {
  self->receive([](ready_atom) {});
}

void expect_equal(const char* name, const char* what, std::uint64_t got, std::uint64_t want) {
  if (got != want)
    throw std::runtime_error(std::string("caf.") + name + ": wrong " + what + ": got " + std::to_string(got) +
                             ", expected " + std::to_string(want));
}

// Sum of 0 + 1 + ... + (n - 1), the checksum of n ordinals. Unsigned
// arithmetic wraps identically on both sides, so it stays a valid check even
// for absurd sizes.
constexpr std::uint64_t sum_below(std::uint64_t n) { return n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2); }

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// -- ping_pong ---------------------------------------------------------------

// Bounces every ball back to whoever sent it, one step further.
caf::behavior pong_actor(caf::event_based_actor* self) {
  return {
      [self](std::uint64_t ball) { self->send(caf::actor_cast<caf::actor>(self->current_sender()), ball + 1); },
      [self](stop_atom) { self->quit(); },
  };
}

struct PingState {
  caf::actor report_to;
  caf::actor pong;
  std::uint64_t round_trips = 0;
};

// The ball's value is the number of completed round trips: pong increments it,
// so the final value proves every bounce really went through pong.
caf::behavior ping_actor(caf::stateful_actor<PingState>* self, caf::actor report_to, std::uint64_t round_trips) {
  auto& st = self->state;
  st.report_to = std::move(report_to);
  st.round_trips = round_trips;
  st.pong = self->spawn(pong_actor);
  self->send(st.report_to, ready_atom::value);
  auto finish = [self](std::uint64_t completed) {
    auto& s = self->state;
    self->send(s.report_to, done_atom::value, completed, completed);
    self->send(s.pong, stop_atom::value);
    self->quit();
  };
  return {
      [self, finish](start_atom) {
        if (self->state.round_trips == 0)
          finish(0);
        else
          self->send(self->state.pong, std::uint64_t{0});
      },
      [self, finish](std::uint64_t completed) {
        if (completed == self->state.round_trips)
          finish(completed);
        else
          self->send(self->state.pong, completed);
      },
  };
}

// -- request_response --------------------------------------------------------

caf::behavior server_actor(caf::event_based_actor* self) {
  return {
      // Returning a value from a handler of a request delivers the response.
      [](std::uint64_t x) -> std::uint64_t { return x + 1; },
      [self](stop_atom) { self->quit(); },
  };
}

struct ClientState {
  caf::actor report_to;
  caf::actor server;
  std::uint64_t requests = 0;
  std::uint64_t next = 0;
  std::uint64_t checksum = 0;
};

using client_actor_t = caf::stateful_actor<ClientState>;

void finish_client(client_actor_t* self) {
  auto& st = self->state;
  self->send(st.report_to, done_atom::value, st.next, st.checksum);
  self->send(st.server, stop_atom::value);
  self->quit();
}

// Issues request number `next` and re-arms itself from the response handler,
// so exactly one request is in flight at any time. `await` (rather than
// `then`) suspends the client's mailbox until the response arrives, i.e. the
// client is blocked on its request like an elfo/elfin actor awaiting
// `request(...).resolve()`.
void issue_request(client_actor_t* self) {
  auto& st = self->state;
  if (st.next == st.requests) {
    finish_client(self);
    return;
  }
  const std::uint64_t x = st.next++;
  self->request(st.server, caf::infinite, x)
      .await(
          [self, x](std::uint64_t reply) {
            if (reply != x + 1) {
              self->send(self->state.server, stop_atom::value);
              fail(self, self->state.report_to,
                   "request " + std::to_string(x) + " answered with " + std::to_string(reply));
              return;
            }
            self->state.checksum += reply;
            issue_request(self);
          },
          [self](caf::error& err) {
            self->send(self->state.server, stop_atom::value);
            fail(self, self->state.report_to, "request failed: " + self->system().render(err));
          });
}

caf::behavior client_actor(client_actor_t* self, caf::actor report_to, std::uint64_t requests) {
  auto& st = self->state;
  st.report_to = std::move(report_to);
  st.requests = requests;
  st.server = self->spawn(server_actor);
  self->send(st.report_to, ready_atom::value);
  return {
      [self](start_atom) { issue_request(self); },
  };
}

// -- throughput ---------------------------------------------------------------

// The consumer: counts and sums uint64 messages and reports once `expected`
// of them have arrived.
struct CounterState {
  caf::actor report_to;
  std::uint64_t expected = 0;
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
};

caf::behavior counter_actor(caf::stateful_actor<CounterState>* self, caf::actor report_to, std::uint64_t expected) {
  self->state.report_to = std::move(report_to);
  self->state.expected = expected;
  return {
      [self](std::uint64_t value) {
        auto& st = self->state;
        st.sum += value;
        if (++st.count == st.expected) {
          self->send(st.report_to, done_atom::value, st.count, st.sum);
          self->quit();
        }
      },
  };
}

// How many messages a producer sends per handler invocation before it
// re-schedules itself with a `more` message. Keeps each handler short; note
// that with CAF's default (unlimited) scheduler.max-throughput an actor keeps
// draining its own mailbox, so the self-sent `more` is consumed in the same
// scheduling slot and the producer does not actually give up its thread
// between batches. That is CAF's default behaviour and left as is.
constexpr std::uint64_t kBatch = 1024;

struct ProducerState {
  caf::actor consumer;
  std::uint64_t messages = 0;
  std::uint64_t next = 0;
};

// Sends its messages without waiting for the consumer: CAF mailboxes are
// unbounded (CAF 0.17 has no back-pressure for plain sends), so producers run
// as fast as CAF lets them and any backlog simply piles up in the consumer's
// mailbox. That is CAF's semantics and is measured as such; elfin's bounded
// mailboxes may make its producers wait instead.
caf::behavior producer_actor(caf::stateful_actor<ProducerState>* self, caf::actor consumer, std::uint64_t messages) {
  self->state.consumer = std::move(consumer);
  self->state.messages = messages;
  return {
      // `start` from the main thread and `more` from itself both mean
      // "send the next batch".
      [self](start_atom) { self->send(self, more_atom::value); },
      [self](more_atom) {
        auto& st = self->state;
        const auto end = std::min(st.messages, st.next + kBatch);
        for (; st.next < end; ++st.next) self->send(st.consumer, st.next);
        if (st.next < st.messages)
          self->send(self, more_atom::value);
        else
          self->quit();
      },
  };
}

// -- spawn --------------------------------------------------------------------

// Answers its one message (its ordinal) to the collector, then quits.
caf::behavior spawn_worker(caf::event_based_actor* self, caf::actor collector) {
  return {
      [self, collector](std::uint64_t ordinal) {
        self->send(collector, ordinal);
        self->quit();
      },
  };
}

// How many spawned-but-not-yet-answered workers the spawner allows.
//
// Why a window at all: a freshly spawned actor becomes a job in the spawning
// scheduler thread's queue, and CAF 0.17's work-stealing `take_tail` walks
// that singly linked queue from the head, i.e. each steal is O(queue length).
// Spawning all actors from one handler (CAF's default unlimited
// scheduler.max-throughput also never lets a self-rescheduling spawner yield)
// queues them all up at once, and with >= 2 threads the idle thread's steals
// make the run quadratic (measured: ~4.5 us/actor at 100k with one thread, but
// ~100 us/actor with two). Keeping a bounded number of workers in flight
// measures spawn cost instead of that artefact; 64 keeps any realistic number
// of threads busy and was the fastest window on the 2-core reference box.
constexpr std::uint64_t kSpawnWindow = 64;

struct SpawnerState {
  caf::actor report_to;
  std::uint64_t actors = 0;
  std::uint64_t next = 0;
  std::uint64_t answers = 0;
  std::uint64_t checksum = 0;
};

using spawner_actor_t = caf::stateful_actor<SpawnerState>;

void spawn_next_worker(spawner_actor_t* self) {
  auto& st = self->state;
  auto worker = self->spawn(spawn_worker, handle_of(self));
  self->send(worker, st.next++);
}

// Spawns the workers and is also their collector: every answer frees a slot
// in the window, which is immediately refilled with a new worker.
caf::behavior spawner_actor(spawner_actor_t* self, caf::actor report_to, std::uint64_t actors) {
  auto& st = self->state;
  st.report_to = std::move(report_to);
  st.actors = actors;
  return {
      [self](start_atom) {
        auto& s = self->state;
        while (s.next < s.actors && s.next < kSpawnWindow) spawn_next_worker(self);
      },
      [self](std::uint64_t ordinal) {
        auto& s = self->state;
        s.checksum += ordinal;
        ++s.answers;
        if (s.next < s.actors) spawn_next_worker(self);
        if (s.answers == s.actors) {
          self->send(s.report_to, done_atom::value, s.answers, s.checksum);
          self->quit();
        }
      },
  };
}

// -- skynet -------------------------------------------------------------------

constexpr std::uint64_t kSkynetLeaves = 1'000'000;
constexpr std::uint64_t kSkynetFanout = 10;
constexpr std::uint64_t kSkynetActors = 1'111'111;  // 1 + 10 + ... + 10^6
constexpr std::uint64_t kSkynetSum = 499'999'500'000;
static_assert(sum_below(kSkynetLeaves) == kSkynetSum);

// A leaf reports its ordinal to its parent and is done.
caf::behavior skynet_leaf(caf::event_based_actor* self, caf::actor parent, std::uint64_t ordinal) {
  self->send(parent, ordinal);
  self->quit();
  return {};
}

struct SkynetState {
  caf::actor parent;
  std::uint64_t sum = 0;
  std::uint64_t pending = 0;
};

// An inner node covering ordinals [first, first + size) spawns 10 children,
// each covering a tenth, and reports the sum of their answers to its parent.
caf::behavior skynet_node(caf::stateful_actor<SkynetState>* self, caf::actor parent, std::uint64_t first,
                          std::uint64_t size) {
  self->state.parent = std::move(parent);
  self->state.pending = kSkynetFanout;
  const auto child_size = size / kSkynetFanout;
  const auto me = handle_of(self);
  for (std::uint64_t i = 0; i < kSkynetFanout; ++i) {
    const auto child_first = first + i * child_size;
    if (child_size == 1)
      self->spawn(skynet_leaf, me, child_first);
    else
      self->spawn(skynet_node, me, child_first, child_size);
  }
  return {
      [self](std::uint64_t partial) {
        auto& st = self->state;
        st.sum += partial;
        if (--st.pending == 0) {
          self->send(st.parent, st.sum);
          self->quit();
        }
      },
  };
}

// -- fan_out ------------------------------------------------------------------
// Each round makes every worker runnable at once, i.e. `actors` jobs land in
// the driver's scheduler queue; with >= 2 threads CAF 0.17's O(queue length)
// steals (see kSpawnWindow) then make large fan-outs superlinear. Unlike for
// spawn there is nothing to bound here: messaging every worker *is* the
// workload, so this is reported as CAF's real behaviour.

// Echoes every round number back to the driver.
caf::behavior fan_worker(caf::event_based_actor* self, caf::actor driver) {
  return {
      [self, driver](std::uint64_t round) { self->send(driver, round); },
      [self](stop_atom) { self->quit(); },
  };
}

struct FanDriverState {
  caf::actor report_to;
  std::vector<caf::actor> workers;
  std::uint64_t rounds = 0;
  std::uint64_t round = 0;
  std::uint64_t pending = 0;
  std::uint64_t replies = 0;
  std::uint64_t checksum = 0;
};

using fan_driver_t = caf::stateful_actor<FanDriverState>;

void fan_finish(fan_driver_t* self) {
  auto& st = self->state;
  self->send(st.report_to, done_atom::value, st.replies, st.checksum);
  for (const auto& worker : st.workers) self->send(worker, stop_atom::value);
  st.workers.clear();
  self->quit();
}

void fan_begin_round(fan_driver_t* self) {
  auto& st = self->state;
  if (st.round == st.rounds || st.workers.empty()) {
    fan_finish(self);
    return;
  }
  st.pending = st.workers.size();
  for (const auto& worker : st.workers) self->send(worker, st.round);
}

// Spawns its workers during (untimed) setup, then signals `ready`.
caf::behavior fan_driver(fan_driver_t* self, caf::actor report_to, std::uint64_t actors, std::uint64_t rounds) {
  auto& st = self->state;
  st.report_to = std::move(report_to);
  st.rounds = rounds;
  st.workers.reserve(actors);
  const auto me = handle_of(self);
  for (std::uint64_t i = 0; i < actors; ++i) st.workers.push_back(self->spawn(fan_worker, me));
  self->send(st.report_to, ready_atom::value);
  return {
      [self](start_atom) { fan_begin_round(self); },
      [self](std::uint64_t round) {
        auto& s = self->state;
        ++s.replies;
        s.checksum += round;
        if (--s.pending == 0) {
          ++s.round;
          fan_begin_round(self);
        }
      },
  };
}

}  // namespace

// -- public entry points ------------------------------------------------------

Figure ping_pong(std::uint64_t round_trips, unsigned threads) {
  constexpr const char* name = "ping_pong";
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    auto ping = system.spawn(ping_actor, handle_of(&*self), round_trips);
    await_ready(self);
    Stopwatch clock;
    self->send(ping, start_atom::value);
    const auto out = await_outcome(name, self);
    const double seconds = clock.seconds();
    expect_equal(name, "round trips", out.count, round_trips);
    return Figure{seconds, round_trips};
  });
}

Figure request_response(std::uint64_t requests, unsigned threads) {
  constexpr const char* name = "request_response";
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    auto client = system.spawn(client_actor, handle_of(&*self), requests);
    await_ready(self);
    Stopwatch clock;
    self->send(client, start_atom::value);
    const auto out = await_outcome(name, self);
    const double seconds = clock.seconds();
    expect_equal(name, "response count", out.count, requests);
    // Responses are x + 1 for x in [0, requests): sum_below(requests + 1).
    expect_equal(name, "response checksum", out.checksum, sum_below(requests + 1));
    return Figure{seconds, requests};
  });
}

Figure throughput(unsigned producers, std::uint64_t messages_per_producer, unsigned threads) {
  constexpr const char* name = "throughput";
  const std::uint64_t total = std::uint64_t{producers} * messages_per_producer;
  if (total == 0) throw std::invalid_argument("caf.throughput: needs at least one producer and one message");
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    // Setup (untimed): the consumer and all producers exist before the clock
    // starts; their trivial init runs lazily on first scheduling.
    auto consumer = system.spawn(counter_actor, handle_of(&*self), total);
    std::vector<caf::actor> producer_handles;
    producer_handles.reserve(producers);
    for (unsigned i = 0; i < producers; ++i)
      producer_handles.push_back(system.spawn(producer_actor, consumer, messages_per_producer));
    Stopwatch clock;
    for (const auto& producer : producer_handles) self->send(producer, start_atom::value);
    const auto out = await_outcome(name, self);
    const double seconds = clock.seconds();
    expect_equal(name, "message count", out.count, total);
    expect_equal(name, "payload checksum", out.checksum, std::uint64_t{producers} * sum_below(messages_per_producer));
    return Figure{seconds, total};
  });
}

Figure spawn(std::uint64_t actors, unsigned threads) {
  constexpr const char* name = "spawn";
  if (actors == 0) throw std::invalid_argument("caf.spawn: needs at least one actor");
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    auto spawner = system.spawn(spawner_actor, handle_of(&*self), actors);
    Stopwatch clock;
    self->send(spawner, start_atom::value);
    const auto out = await_outcome(name, self);
    const double seconds = clock.seconds();
    expect_equal(name, "answer count", out.count, actors);
    expect_equal(name, "ordinal checksum", out.checksum, sum_below(actors));
    return Figure{seconds, actors};
  });
}

Figure skynet(unsigned threads) {
  constexpr const char* name = "skynet";
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    // Everything, including spawning the root, is part of the measurement.
    Stopwatch clock;
    system.spawn(skynet_node, handle_of(&*self), std::uint64_t{0}, kSkynetLeaves);
    std::uint64_t sum = 0;
    self->receive([&](std::uint64_t total) { sum = total; });
    const double seconds = clock.seconds();
    expect_equal(name, "sum", sum, kSkynetSum);
    return Figure{seconds, kSkynetActors};
  });
}

Figure fan_out(std::uint64_t actors, std::uint64_t rounds, unsigned threads) {
  constexpr const char* name = "fan_out";
  return with_system(name, threads, [&](caf::actor_system& system, caf::scoped_actor& self) {
    auto driver = system.spawn(fan_driver, handle_of(&*self), actors, rounds);
    await_ready(self);
    Stopwatch clock;
    self->send(driver, start_atom::value);
    const auto out = await_outcome(name, self);
    const double seconds = clock.seconds();
    expect_equal(name, "reply count", out.count, actors * rounds);
    expect_equal(name, "reply checksum", out.checksum, actors * sum_below(rounds));
    return Figure{seconds, actors * rounds};
  });
}

bool available() { return true; }

}  // namespace elfin_bench::caf_peer
