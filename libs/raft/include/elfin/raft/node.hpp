// One replica of one Raft group as a deterministic state machine: no I/O, no threads, no clock.
// Input: tick() (time), step() (a message from a peer), propose*/read_index/transfer_leadership
// (the application's requests). Output: Ready batches (ready.hpp) the application persists,
// sends and applies, acknowledging each with advance(). The same inputs in the same order always
// give the same outputs, so a whole cluster can be simulated in one thread from a seed.
//
// Features: pre-vote and check-quorum with leader stickiness; pipelined replication with a
// per-follower in-flight window (probe / replicate / snapshot), fast backtracking on conflicts;
// durable-before-counted acknowledgements; the Figure 8 commit rule with a no-op per new term;
// ReadIndex and lease reads (config.hpp states the lease's clock bound); snapshots and log
// compaction; single-server membership changes with learners; leadership transfer; quiescence.
//
// Quiescence (Config::quiesce_after_ticks): an idle group stops ticking and heartbeating. A leader
// idle that long, whose followers all hold its whole log and which has committed it, sends a
// quiescing heartbeat instead of the plain one; a follower whose log ends exactly there quiesces
// and says so; once every follower said so the leader quiesces too (until then it keeps
// heartbeating, so a follower that missed the request is never left without heartbeats). A
// quiesced Node ignores tick() (the application may stop calling it) and sends nothing. It wakes
// on any proposal, read, membership change or transfer, on any message but the quiescing
// handshake itself, and on wake(); a waking leader heartbeats at once, which wakes its followers
// (woken by a proposal, it sends the entry's Append instead, which wakes them as well).
// A lagging or partitioned replica therefore keeps its group awake (its leader cannot quiesce
// without it) unless the application reported its node down (report_node_down): then the leader
// sleeps once the rest of a quorum is caught up, and wakes when the node is reported up or is
// heard from. A replica that restarts wakes the group with its first (pre-)vote. What a
// quiesced follower cannot see by itself is its leader's death: the application reports it with
// report_node_down() (from a per-node liveness signal), and the follower then forgets the leader
// and campaigns within an election timeout. A quiesced follower never campaigns on its own.
//
// Thread safety: distinct objects are independent; one object is used by one thread at a time
// (one actor owns it).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <elfin/raft/conf_change.hpp>
#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/config.hpp>
#include <elfin/raft/entry.hpp>
#include <elfin/raft/message.hpp>
#include <elfin/raft/propose_result.hpp>
#include <elfin/raft/ready.hpp>
#include <elfin/raft/recovered.hpp>
#include <elfin/raft/role.hpp>
#include <elfin/raft/snapshot.hpp>

namespace elfin::raft {

namespace internal {
class Core;
}  // namespace internal

class Node {
 public:
  /// `snapshot_source` returns the application's latest saved snapshot (taken at or after the
  /// index last passed to compact()); called by a leader whose follower needs entries that are
  /// compacted away. nullopt: not available now, asked again later.
  /// Throws std::invalid_argument for a Config that cannot work (id 0, heartbeat_tick not below
  /// election_tick, Lease reads without check_quorum): a programming error, not a runtime one.
  Node(Config config, Recovered recovered, std::function<std::optional<Snapshot>()> snapshot_source);
  Node(Node&&) noexcept;
  Node& operator=(Node&&) noexcept;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  /// One unit of time: election and heartbeat timeouts, check-quorum, transfer timeout.
  void tick();
  /// A message from a peer (any order, duplicates and losses are fine); one addressed to another
  /// node is ignored.
  void step(const Message& message);
  /// Same, taking the entries and snapshot by move.
  void step(Message&& message);
  /// Campaign now (tests, or a hint from the application); ignored on a leader or a non-voter.
  void campaign();

  /// Appends `data` as a Normal entry on the leader; returns its index.
  [[nodiscard]] ProposeResult propose(Bytes data);
  /// Appends a membership change (conf_change.hpp states the rules); returns its index.
  [[nodiscard]] ProposeResult propose_conf_change(ConfChange change);
  /// A linearizable read: answered by a ReadState with this context in Ready::reads (rejected when
  /// there is no leader). Contexts should be unique per outstanding read.
  void read_index(Bytes context);
  /// Hands leadership to `to` (a voter): proposals are refused until it completes or aborts
  /// (after an election timeout). Ignored on a follower, for self or a non-voter.
  void transfer_leadership(NodeId to);
  /// The application saved a snapshot covering entries up to `index` (at most the last applied):
  /// drop the log up to it.
  void compact(Index index);
  /// The transport could not reach `node`: a leader stops pipelining to it and probes.
  void report_unreachable(NodeId node);
  /// The InstallSnapshot sent to `node` was delivered (ok) or failed.
  void report_snapshot(NodeId node, bool ok);
  /// `node`'s process is gone (its liveness signal lapsed). A quiesced follower whose leader is
  /// there wakes, forgets the leader (so it grants votes) and campaigns after 1 to
  /// election_tick ticks (an awake follower notices by itself). A leader may quiesce without a
  /// follower there while the others it needs for a quorum are caught up.
  void report_node_down(NodeId node);
  /// `node` is back (its liveness signal resumed; any message from it counts too): a leader that
  /// quiesced without it wakes to catch it up.
  void report_node_up(NodeId node);
  /// Leaves quiescence (ignored when awake), for application events the Node does not see.
  void wake();
  /// Quiesced: tick() does nothing and nothing is sent until something wakes the Node.
  [[nodiscard]] bool quiesced() const noexcept;

  [[nodiscard]] bool has_ready() const;
  [[nodiscard]] Ready ready();
  /// Readies up to `ready_id` are durable: their hard state, snapshot and entries.
  void advance(std::uint64_t ready_id);

  [[nodiscard]] NodeId id() const noexcept;
  [[nodiscard]] Role role() const noexcept;
  [[nodiscard]] NodeId leader() const noexcept;
  [[nodiscard]] Term term() const noexcept;
  [[nodiscard]] NodeId vote() const noexcept;
  [[nodiscard]] Index commit() const noexcept;
  /// The last entry handed out in Ready::committed (or the snapshot's index).
  [[nodiscard]] Index applied() const noexcept;
  [[nodiscard]] Index first_index() const noexcept;
  [[nodiscard]] Index last_index() const noexcept;
  /// The last entry known durable on this replica.
  [[nodiscard]] Index persisted_index() const noexcept;
  /// The term of the entry at `index`, when the log holds it (or it is the compaction point).
  [[nodiscard]] std::optional<Term> term_at(Index index) const;
  /// The membership as of the last entry handed out.
  [[nodiscard]] const ConfState& conf() const noexcept;
  /// The replica a transfer is handing leadership to (0: none).
  [[nodiscard]] NodeId transferee() const noexcept;
  /// On a leader: the highest index known replicated on `node` (a voter or learner other than
  /// this one); nullopt on a follower or for a node the leader does not track.
  [[nodiscard]] std::optional<Index> match(NodeId node) const;

 private:
  std::unique_ptr<internal::Core> core_;
};

}  // namespace elfin::raft
