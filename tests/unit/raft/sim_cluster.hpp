// A deterministic simulation of a Raft group in one process, for the raft tests: N Nodes on
// virtual time, a simulated network per link (delay, drop, duplicate, reorder, partitions) and a
// simulated durable storage per node where a crash keeps only what was acknowledged durable
// (advance'd): readies still being written are lost, as in a power loss. A restart recovers from
// that storage through Recovered. Everything random comes from one seed, so a failing run
// replays exactly from the seed it prints.
//
// The cluster checks Raft's safety properties as it runs (failure() holds the first violation):
// election safety, leader append-only, log matching, leader completeness, state machine safety,
// durable-before-counted (an acknowledged index is in the acknowledging node's storage), term and
// vote monotonic across crashes, commit monotonic, reads see every write committed before they
// were asked, and every applied proposal applied at most once per replica.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <elfin/raft/node.hpp>

namespace elfin::raft::sim {

/// Network and disk behaviour; times in simulation steps (`steps_per_tick` steps per tick).
struct Faults {
  int min_delay = 1;
  int max_delay = 3;
  double drop = 0;       ///< probability a message is lost
  double duplicate = 0;  ///< probability a message is delivered twice
  int max_disk_delay = 2;
};

struct Options {
  std::size_t nodes = 3;
  std::uint64_t seed = 1;
  Config config;  ///< id and seed are set per node
  int steps_per_tick = 10;
  bool auto_tick = true;
  Faults faults;
  /// Automatic ticks: each node's clock runs at a rate drawn in [1, 1 + max_clock_drift] of the
  /// simulation's (relative drift between any two nodes at most max_clock_drift).
  double max_clock_drift = 0;
};

/// What survives a crash.
struct Storage {
  HardState hard_state;
  std::optional<Snapshot> snapshot;
  std::vector<Entry> entries;
};

class Cluster {
 public:
  explicit Cluster(Options options);
  ~Cluster();

  // --- time -----------------------------------------------------------------------------------
  /// Advances `steps` steps: deliveries, disk completions, readies, and ticks when auto_tick.
  void run(int steps);
  /// Runs until `done` holds (checked after every step) or `max_steps` pass; returns done().
  bool run_until(const std::function<bool()>& done, int max_steps);
  /// Runs without ticking until no message is in flight and no write pending (bounded).
  void settle(int max_steps = 2000);
  void tick(NodeId id);
  void tick_all();
  /// A perfect, instant per-node liveness signal: every live node is told of each node that is
  /// down or whose link to it is cut (Node::report_node_down). Automatic ticks do this each tick.
  void report_liveness();

  // --- nodes ----------------------------------------------------------------------------------
  [[nodiscard]] Node& node(NodeId id);
  [[nodiscard]] bool alive(NodeId id) const;
  [[nodiscard]] std::vector<NodeId> ids() const;
  /// The live leader of the highest term (0: none).
  [[nodiscard]] NodeId leader() const;
  void crash(NodeId id);
  void restart(NodeId id);
  /// Starts a fresh node (empty storage) that joins through a membership change.
  void spawn(NodeId id);
  /// Campaigns on `id` (then settles, ticking nothing).
  void elect(NodeId id);

  // --- application ----------------------------------------------------------------------------
  /// Proposes a unique payload on `id`; tracked, so its application is checked.
  ProposeResult propose(NodeId id);
  /// Payload ids applied by `id`'s state machine, in order.
  [[nodiscard]] const std::vector<std::uint64_t>& applied_ids(NodeId id) const;
  [[nodiscard]] Index applied_index(NodeId id) const;
  /// Proposals applied on their proposer (acknowledged to the client).
  [[nodiscard]] const std::set<std::uint64_t>& acknowledged() const { return acknowledged_; }
  /// A linearizable read on `id`; answers land in reads(id).
  void read(NodeId id);
  [[nodiscard]] const std::vector<ReadState>& reads(NodeId id) const;
  /// Saves a snapshot of `id`'s state machine and compacts its log, keeping `keep` entries.
  void snapshot_and_compact(NodeId id, Index keep);
  [[nodiscard]] const Storage& storage(NodeId id) const;

  // --- network --------------------------------------------------------------------------------
  void set_faults(const Faults& faults) { options_.faults = faults; }
  /// Messages for which `drop` returns true are lost (nullptr: none).
  void set_filter(std::function<bool(const Message&)> drop) { filter_ = std::move(drop); }
  /// Only nodes in the same group talk; nodes in no group are isolated.
  void partition(const std::vector<std::vector<NodeId>>& groups);
  void isolate(NodeId id);
  void heal();
  /// Messages in flight.
  [[nodiscard]] std::size_t in_flight() const { return network_.size(); }
  /// Every message sent so far, by type (for tests asserting on traffic).
  [[nodiscard]] std::uint64_t sent(MessageType type) const { return sent_[static_cast<std::size_t>(type)]; }

  // --- checks ---------------------------------------------------------------------------------
  /// The first violated property ("" while none).
  [[nodiscard]] const std::string& failure() const { return failure_; }
  /// Checks log matching across all live nodes now (also done periodically).
  void check_logs();
  [[nodiscard]] std::uint64_t now() const { return now_; }
  [[nodiscard]] std::mt19937_64& rng() { return rng_; }
  [[nodiscard]] Index max_committed() const { return committed_.empty() ? 0 : committed_.rbegin()->first; }

 private:
  struct Replica;

  void start(NodeId id, Recovered recovered);
  void pump(Replica& r);
  void complete_writes(Replica& r, bool all_due);
  void send(Message&& m);
  void deliver_due();
  void fail(std::string what);
  void check_ready(Replica& r, const Ready& ready);
  void apply(Replica& r, const Entry& entry);
  [[nodiscard]] bool linked(NodeId a, NodeId b) const;
  Replica& replica(NodeId id);
  const Replica& replica(NodeId id) const;

  Options options_;
  std::mt19937_64 rng_;
  std::uint64_t now_ = 0;
  std::uint64_t seq_ = 0;
  std::map<NodeId, std::unique_ptr<Replica>> replicas_;
  ConfState initial_conf_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Message> network_;  // by (delivery step, send order)
  std::function<bool(const Message&)> filter_;
  std::map<NodeId, int> group_;  // empty: fully connected
  std::uint64_t sent_[16] = {};

  std::uint64_t next_payload_ = 1;
  std::uint64_t next_read_ = 1;
  std::set<std::uint64_t> acknowledged_;
  std::map<Term, NodeId> leaders_;
  struct Committed {
    Term term;
    EntryKind kind;
    Bytes data;
  };
  std::map<Index, Committed> committed_;
  std::map<std::uint64_t, Index> read_floor_;  // read id -> commit index it must see
  std::string failure_;
};

}  // namespace elfin::raft::sim
