// CAF 0.17 counterparts of elfin's benchmark workloads.
//
// This header deliberately includes no CAF headers: elfin's benchmark binaries
// link the `elfin_bench_caf_peer` static library and call these functions so
// that every benchmark can print elfin's figure next to CAF's in the same run,
// without compiling (or being affected by the warnings of) CAF's headers.
//
// The library target only exists when CAF was found at configure time; it then
// exports the compile definition ELFIN_HAVE_CAF=1 to its users, so callers
// guard their use with `#if defined(ELFIN_HAVE_CAF)`.
#pragma once

#include <cstdint>

namespace elfin_bench::caf_peer {

// One measurement: `ops` operations completed in `seconds` of wall time.
struct Figure {
  double seconds;
  std::uint64_t ops;
};

// Every function builds its own caf::actor_system with `threads` scheduler
// threads, runs the workload, tears the system down, and returns the time of
// the measured part only (system start/stop and any untimed setup excluded).
// Each workload checks its own result and throws std::runtime_error if it is
// wrong. std::invalid_argument is thrown for threads == 0 and for sizes that
// leave nothing to run where the workload cannot be set up (throughput with no
// producer or no message, spawn with no actor); other zero sizes just return
// a Figure with ops == 0.

// Two actors bounce one message back and forth; ops = round trips.
Figure ping_pong(std::uint64_t round_trips, unsigned threads);

// A client actor sends a request, waits for its response, repeats
// (strictly sequential); ops = requests.
Figure request_response(std::uint64_t requests, unsigned threads);

// `producers` actors each send `messages_per_producer` messages to one
// consumer, which counts to producers * messages_per_producer;
// ops = total messages.
Figure throughput(unsigned producers, std::uint64_t messages_per_producer, unsigned threads);

// Spawns `actors` actors that each answer one message to a collector and then
// quit; ops = actors. The spawning actor is also the collector and keeps at
// most 64 workers in flight (each answer triggers the next spawn): spawning
// everything at once hits an O(queue length) work-stealing path in CAF 0.17
// that makes the run quadratic on >= 2 threads (see caf_peer.cpp).
Figure spawn(std::uint64_t actors, unsigned threads);

// Classic skynet: a 10-ary tree with 1,000,000 leaves (6 levels,
// 1,111,111 actors); leaves return their ordinal, parents sum their children;
// the root's sum must be 499999500000; ops = 1111111.
Figure skynet(unsigned threads);

// Spawns `actors` workers once (not timed), then `rounds` times sends one
// message to every worker, each worker replies, and waits for all replies;
// ops = actors * rounds. Caveat: with >= 2 threads and thousands of workers
// this gets superlinear in `actors` on CAF 0.17 (same work-stealing path as
// above); it is not worked around, as messaging every worker is the workload.
Figure fan_out(std::uint64_t actors, std::uint64_t rounds, unsigned threads);

// Always true: the library is only built when CAF is found. Lets callers
// that already guard on ELFIN_HAVE_CAF ask at run time, too.
bool available();

}  // namespace elfin_bench::caf_peer
