// SObjectizer 5.8 counterparts of elfin's benchmark workloads (the same shapes as caf_peer.hpp).
//
// This header deliberately includes no SObjectizer headers: elfin's benchmark binaries link the
// `elfin_bench_so_peer` static library and call these functions, so every benchmark can print
// SObjectizer's figure next to elfin's and CAF's in the same run without compiling SObjectizer's
// headers. The library target only exists when SObjectizer was found at configure time; it then
// exports the compile definition ELFIN_HAVE_SOBJECTIZER=1, so callers guard their use with
// `#if defined(ELFIN_HAVE_SOBJECTIZER)`.
//
// Execution model, the counterpart of elfin's `threads` workers and CAF's scheduler threads:
//  * Every function starts its own environment (`so_5::wrapped_env_t`, the default multi-threaded
//    infrastructure) and binds every agent to ONE `thread_pool` dispatcher with exactly `threads`
//    threads. The thread pool is SObjectizer's dispatcher for many agents sharing a fixed set of
//    threads, which is what elfin's workers and CAF's work-stealing scheduler are. The others do
//    not fit: `one_thread` runs everything on one thread, `active_obj` / `active_group` give each
//    agent / group a thread of its own, `adv_thread_pool` can also run one agent's thread-safe
//    handlers in parallel (no workload here has any), the `prio_*` ones schedule by priority.
//  * The binding uses `fifo_t::individual`: every agent has its own event queue and can run on any
//    pool thread in parallel with the others, as an elfin or CAF actor does. SObjectizer's default,
//    `fifo_t::cooperation`, would give all agents of one coop a single shared queue, i.e. run them
//    one at a time. `max_demands_at_once` keeps its default (4 events per turn of an agent).
//  * The environment's own threads (the default `one_thread` dispatcher, the timer thread, the
//    thread of final coop deregistration) run none of these agents, like CAF's helper threads.
//    The last one does work in `spawn` and `skynet`: it destroys deregistered coops and their
//    agents there, on top of the `threads` pool threads (and on the same cores).
//  * Mailboxes are unbounded, as CAF's: SObjectizer applies no message limits unless an agent
//    declares them, so senders never wait and a backlog piles up in the receiver's queue.
//  * Hot-path messages carry one std::uint64_t (plus, for requests, the mbox to answer to);
//    control messages are signals. Agents address each other through their direct mboxes
//    (SObjectizer's actor handles); `fan_out` uses one MPMC mbox all workers subscribe to.
//  * The main thread registers the agents (untimed unless stated), reads the clock, kicks the
//    workload off and waits on an mchain for the final report, then reads the clock again; the
//    environment is stopped and joined after that, outside the measured window.
//
// Each workload checks its own result and throws std::runtime_error if it is wrong (or if no
// report arrives within 300 s). std::invalid_argument is thrown for threads == 0 and, as the CAF
// peer does, for throughput with no message and spawn with no actor.
#pragma once

#include <cstdint>

namespace elfin_bench::so_peer {

// One measurement: `ops` operations completed in `seconds` of wall time.
struct Figure {
  double seconds;
  std::uint64_t ops;
};

// Ping and pong (one coop) bounce one message between their direct mboxes; pong adds one, so the
// final value proves every bounce went through it; ops = round trips.
Figure ping_pong(std::uint64_t round_trips, unsigned threads);

// A client agent sends `inc{reply_to, x}` to a server agent, which answers `x + 1` to `reply_to`;
// the next request leaves only when the answer is in (strictly sequential). SObjectizer 5.8's core
// has no request/response primitive between agents, so carrying the reply mbox in the request is
// the idiomatic form; ops = requests.
Figure request_response(std::uint64_t requests, unsigned threads);

// `producers` agents each send `messages_per_producer` messages to one consumer's direct mbox, in
// batches of 1024 per event (a self-sent signal asks for the next batch); the consumer counts to
// producers * messages_per_producer; ops = total messages.
Figure throughput(unsigned producers, std::uint64_t messages_per_producer, unsigned threads);

// A spawner agent keeps at most 64 workers in flight: each worker is an agent in a child coop of
// its own (SObjectizer registers agents coop by coop), is sent its ordinal, answers it to the
// spawner and deregisters its coop; each answer starts the next worker; ops = actors.
Figure spawn(std::uint64_t actors, unsigned threads);

// Skynet: a 10-ary tree with 1,000,000 leaves (1,111,111 agents). An inner node registers its ten
// children as ONE child coop (a coop is SObjectizer's unit of registration: agents created
// together), each sums its children's answers, reports to its parent's mbox and deregisters the
// children's coop; leaves answer their ordinal when they start. The root's sum must be
// 499999500000; registering the root is timed too; ops = 1111111.
Figure skynet(unsigned threads);

// `actors` workers (one coop, registered untimed) subscribe to one MPMC mbox; `rounds` times the
// driver sends the round number there once (SObjectizer delivers it to every subscriber), every
// worker answers to the driver's direct mbox, and the round ends when all answers are in;
// ops = actors * rounds.
Figure fan_out(std::uint64_t actors, std::uint64_t rounds, unsigned threads);

// Always true: the library is only built when SObjectizer is found.
bool available();

// SObjectizer's version as "5.8.4".
const char* version();

}  // namespace elfin_bench::so_peer
