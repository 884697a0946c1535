// A Node's settings. Time is counted in ticks (Node::tick); the application decides how long a
// tick is (for example 100 ms) and calls tick() on that period.
//
// Lease reads (read_mode = Lease) answer a read without a heartbeat round while the leader holds
// a lease: a quorum acknowledged a heartbeat sent at leader tick s, and fewer than
// election_tick - 2 - lease_drift_ticks leader ticks have passed since. It rests on voters not
// voting for another candidate for election_tick of their own ticks after hearing from the leader
// (check_quorum's leader stickiness, hence required), and therefore on a clock bound: no replica's
// ticks may run faster than the leader's by more than lease_drift_ticks per election timeout, i.e.
// relative drift <= lease_drift_ticks / (election_tick - 1) (10 ticks, 1 drift tick: 11%). A
// process pause that delays the leader's ticks is drift too. A leader that started a leadership
// transfer never uses its lease again (the transferee's forced election ignores stickiness), and a
// restarted replica in Lease mode refuses votes for its first election timeout. Outside these
// bounds use Safe (ReadIndex): it needs no clock.
//
// Thread safety: a plain value type.
#pragma once

#include <cstddef>
#include <cstdint>

#include <elfin/raft/entry.hpp>

namespace elfin::raft {

struct Config {
  NodeId id = 0;
  /// Followers campaign after a randomized timeout in [election_tick, 2 * election_tick).
  int election_tick = 10;
  /// A leader sends heartbeats every heartbeat_tick ticks (< election_tick).
  int heartbeat_tick = 1;
  /// Ask "would you vote for me" before raising the term.
  bool pre_vote = true;
  /// A leader that did not hear from a quorum within an election timeout steps down, and a
  /// replica that heard from a leader within the election timeout ignores (pre-)votes.
  bool check_quorum = true;
  /// Append messages in flight per follower (pipelining window).
  std::size_t max_inflight = 256;
  /// Bytes of entries per Append (at least one entry is always sent).
  std::uint64_t max_bytes_per_append = 1 << 20;
  /// 0: unlimited; otherwise a leader refuses proposals (Dropped) while this many bytes of its
  /// entries are not committed yet (one proposal is always admitted).
  std::uint64_t max_uncommitted_bytes = 0;
  enum class ReadMode : std::uint8_t { Safe, Lease } read_mode = ReadMode::Safe;
  /// Randomizes election timeouts, deterministically (mixed with `id`).
  std::uint64_t seed = 0;
  /// Lease reads: ticks of margin for clock drift (see above).
  int lease_drift_ticks = 1;
  /// 0: never quiesce. Otherwise a leader idle for this many ticks (no proposal, read, membership
  /// change or transfer) whose every replica holds its whole log, committed, asks them to quiesce
  /// (node.hpp says what quiesced means). Ignored with Lease reads: a lease counts ticks. A lone
  /// voter (no other replica) quiesces without the idle ticks, as soon as its log is applied: its
  /// sleeps and wakes cost no other replica anything.
  int quiesce_after_ticks = 0;
};

}  // namespace elfin::raft
