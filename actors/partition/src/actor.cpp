// A partition actor: the owner of one libs/raft Node, driving it with ticks, peer messages and
// client requests, and executing what each Ready asks:
//
//   at once, when the Ready is taken
//     messages                  sent (a leader's Appends go out while it writes its own log)
//     reads                     ReadIndex results: answered once applied >= the read's index
//     committed                 applied in order (they are durable here already); the proposal
//                               waiting at each index is answered with the state machine's
//                               response, if its term is the entry's
//   by the persister, in Ready order, each WAL round writing every Ready queued since the last
//     snapshot                  a snapshot from the leader: its file (durable), then the WAL's old
//                               log dropped (TruncateAfter 0)
//     entries, hard state       AppendBatch, and SaveHardState when the term or vote changed,
//                               each answered after the fdatasync covering it
//   once the persister reports the Ready durable (Persisted)
//     advance(id)               the Node counts the entries and the vote as durable
//     messages_after_persist    votes and append responses go out only now
//     (a received snapshot)     the state machine restores it; committed entries that came after
//                               it were held back until now
//   every snapshot_every applied entries: a snapshot file (durable), Node::compact, a WAL Checkpoint
//
// Snapshot files are written and synced on the system's blocking pool (`ctx.blocking`), never on
// a worker: the state machine's bytes are taken on the actor's thread, consistent with what it
// applied, and the actor goes on stepping messages and committing while the file is synced. Only
// once the file is durable does the snapshot become the one the Node sends, the Node compact and
// the WAL checkpoint. One snapshot file is written at a time per partition: a received snapshot
// waits in the persister's queue while this replica's own is written, and no own snapshot starts
// while a received one is queued or being written (it is newer than anything applied here).
//
// Idle partitions sleep: once the Node quiesces (quiesce_after_ticks, see libs/raft's node.hpp) and
// nothing waits for an answer or a write, the actor stops its tick Interval and, on a follower,
// registers its leader with the node's liveness actor (liveness.hpp); a request or a Raft message
// wakes the Node, and the actor then starts ticking again and deregisters. A lone voter quiesces as
// soon as what it wrote is applied, so at replication factor 1 a write starts and stops the ticks
// and rarely sees one. A LeaderDown from the liveness actor is reported to the Node, which wakes
// and elects. A leader registers its followers' nodes with the liveness actor and reports their
// downs and returns to the Node, which then sleeps without a dead follower and wakes when it is
// back. Awake, the timed heartbeats and their answers (libs/raft marks them periodic) go to the
// liveness actor, which carries them to their node with its next ping (coalesce_heartbeats): one
// message per node pair and tick.
//
// The persister is a stream next to the actor (elfin/stream.hpp): it runs while the actor waits in
// `recv`, so the actor keeps stepping peer messages, taking proposals and producing Readies while
// the WAL syncs; Readies queue behind the one being written and the WAL's group commit batches
// them with other partitions'. Requests taken together from the mailbox become one Ready.
//
// A proposal is answered Proposed when its entry is applied here, Dropped when another entry
// (another term) was applied at its index, Timeout after `proposal_timeout`. A follower answers
// NotLeader with the leader it knows. A WAL error fails the actor: it restarts and recovers.
//
// A replica removed from the membership (RemoveReplica, or the placement table's reconcile) learns
// it when it applies its own removal: the leader that applied a removal tells the removed node the
// commit index (one Heartbeat, capped at what that node holds). The removed actor then drops its
// log from the WAL, checkpoints past its last index (so the WAL's segments can retire), deletes its
// snapshot files, and ends; a later re-add starts blank. The WAL forgets indexes at or below a
// checkpoint, so the replica first leaves a marker `<snapshot_dir>/<partition>.released` with that
// index, and a re-added replica refuses snapshots below it (the leader snapshots when it adds a
// learner, so the one it sends is recent). Until it holds such a snapshot it grants no votes: its
// log is gone, so every candidate would look up to date to it, also one restarted from a snapshot
// older than what this replica released whose membership still counts this node as a voter.
// A crash after the marker leaves a replica holding nothing past that index; its snapshot files
// go last, so the node starts it again when it restarts, and its recovery finishes the release.
// A replica removed while its node was down never hears of it from the leader; restarted, it
// campaigns, and a member whose applied membership lacks it answers NotMember with the index that
// membership was applied up to: a replica whose log ends below that index, and which the placement
// table does not place here, releases itself the same way (a re-add would have come after that
// index).
#include "actor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/actors/partition/snapshot_file.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/handle.hpp>
#include <elfin/interval.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/raft/conf_change.hpp>
#include <elfin/raft/node.hpp>
#include <elfin/raft/ready.hpp>
#include <elfin/stream.hpp>
#include <elfin/telemetry.hpp>

#include "liveness.hpp"
#include "placement.hpp"
#include "reconcile.hpp"
#include "router.hpp"
#include "snapshot_writer.hpp"
#include "wire.hpp"

namespace elfin::actors::partition::internal {

/// A Raft tick (from the actor's Interval).
struct Tick {
  ELFIN_MESSAGE(partition_actor, Tick);
  ELFIN_NO_DUMPING;
};
/// From the persister: Ready `id` is durable (error: what failed instead).
struct Persisted {
  std::uint64_t id = 0;
  std::string error;
  ELFIN_MESSAGE(partition_actor, Persisted, id, error);
  ELFIN_NO_DUMPING;
};
/// This replica's own snapshot file at `index` is durable (error: what failed instead).
struct SnapshotWritten {
  std::uint64_t index = 0;
  std::string error;
  ELFIN_MESSAGE(partition_actor, SnapshotWritten, index, error);
  ELFIN_NO_DUMPING;
};
/// A WAL checkpoint's outcome.
struct CheckpointDone {
  std::uint64_t index = 0;
  bool ok = false;
  ELFIN_MESSAGE(partition_actor, CheckpointDone, index, ok);
  ELFIN_NO_DUMPING;
};

namespace {

namespace pr = protocols::raft;
namespace pw = protocols::wal;
namespace rf = elfin::raft;
using Clock = std::chrono::steady_clock;

/// Requests taken from the mailbox before the Node's Ready is executed (one WAL round for all).
constexpr int kBatchMessages = 256;
/// Reconcile rounds a removal waits for a lagging replica to catch up (see reconcile()).
constexpr std::uint32_t kRemoveWaits = 3;

pr::Role wire_role(rf::Role role) {
  switch (role) {
    case rf::Role::Follower:
      return pr::Role::Follower;
    case rf::Role::PreCandidate:
      return pr::Role::PreCandidate;
    case rf::Role::Candidate:
      return pr::Role::Candidate;
    case rf::Role::Leader:
      return pr::Role::Leader;
  }
  return pr::Role::Other;
}

rf::Bytes read_context(std::uint64_t id) {
  rf::Bytes out(8);
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(id >> (8 * i));
  return out;
}

std::optional<std::uint64_t> read_id(const rf::Bytes& context) {
  if (context.size() != 8) return std::nullopt;
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < 8; ++i) id |= static_cast<std::uint64_t>(context[i]) << (8 * i);
  return id;
}

// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding): fields grouped by meaning; 40 bytes an actor
class PartitionActor {
 public:
  PartitionActor(PartitionContext ctx, StateMachineFactory factory)
      : ctx_(ctx), factory_(std::move(factory)), partition_(ctx_.key()) {}

  Task<> run() {
    co_await recover();
    if (released_on_recovery_ && config_.from_assignment() && !placed_here()) co_return;  // as release() ends
    ticks_.emplace(ctx_.attach(Interval(Tick{})));
    ticks_->start_on_grid(config_.tick);
    drive();  // what recovery left to do (committed entries to apply again)
    while (auto envelope = co_await ctx_.recv()) {
      co_await dispatch(*envelope);
      for (int i = 0; i < kBatchMessages; ++i) {
        auto more = ctx_.try_recv();
        if (!more) break;
        co_await dispatch(*more);
      }
      drive();
      // Removed from the membership: once nothing is being written any more, clean up and end.
      if (removed_ && jobs_.empty() && !persisting_ && !writing_) break;
      if (bystander_) break;
      sleep_or_wake();
    }
    if (bystander_) {
      // Started only to answer a CreateQuery: holds nothing, wrote nothing, placed elsewhere.
      ticks_->stop();
      unwatch_leader();
      fail_everything(pr::RaftErrorKind::NotLeader, "this node holds no replica of the partition");
      co_return;
    }
    if (removed_ && jobs_.empty() && !persisting_ && !writing_) {
      co_await release();
      co_return;
    }
    fail_everything(pr::RaftErrorKind::ShuttingDown, "the partition actor is terminating");
  }

 private:
  /// The tick timer, which run() starts before anything else may touch it.
  Interval<Tick>& ticks() {
    return *ticks_;  // NOLINT(bugprone-unchecked-optional-access): run() sets it before dispatching
  }

  struct Pending {
    rf::Term term = 0;
    ResponseToken<pr::Propose> token;
    Clock::time_point deadline;
  };
  struct PendingConf {
    rf::Term term = 0;
    std::variant<ResponseToken<pr::AddReplica>, ResponseToken<pr::RemoveReplica>> token;
    Clock::time_point deadline;
  };
  struct PendingRead {
    pr::Bytes query;
    ResponseToken<pr::Read> token;
    Clock::time_point deadline;
  };
  /// A Ready taken from the Node whose writes are not durable yet (or which waits behind one).
  struct Job {
    std::uint64_t id = 0;
    std::optional<rf::Snapshot> snapshot;
    std::vector<rf::Entry> entries;
    std::optional<rf::HardState> hard_state;  ///< set when term or vote changed
    std::vector<rf::Message> after;
    bool deferred = false;  ///< its committed entries wait for it (a snapshot before them)
    std::vector<rf::Entry> committed;
  };
  struct PendingTransfer {
    rf::NodeId to = 0;
    ResponseToken<pr::TransferLeader> token;
    Clock::time_point deadline;
  };

  detail::HandleAwaitable dispatch(Envelope& envelope) {
    return handle(envelope, this, &PartitionActor::on_tick, &PartitionActor::on_raft_message,
                  &PartitionActor::on_propose, &PartitionActor::on_read, &PartitionActor::on_status,
                  &PartitionActor::on_add_replica, &PartitionActor::on_remove_replica, &PartitionActor::on_transfer,
                  &PartitionActor::on_persisted, &PartitionActor::on_snapshot_written, &PartitionActor::on_checkpointed,
                  &PartitionActor::on_leader_down, &PartitionActor::on_follower_liveness, &PartitionActor::on_placement,
                  &PartitionActor::on_wake);
  }

  // --- recovery -----------------------------------------------------------------------------

  Task<> recover() {
    config_ = ctx_.config();
    if (const auto errors = validate(config_); !errors.empty()) {
      throw std::runtime_error(fmt::format("partition {}: invalid config: {}", partition_, fmt::join(errors, "; ")));
    }
    node_id_ = ctx_.addr().node_no();
    dir_ = (std::filesystem::path(config_.snapshot_dir) / fmt::format("{}", partition_)).string();
    machine_ = factory_ ? factory_(partition_) : std::make_unique<KvStateMachine>();

    rf::Recovered recovered;
    if (config_.from_assignment()) {
      // Where the replicas should be (waits until the group has a table).
      auto placement = co_await ctx_.request_to(ctx_.group_addr(), GetPlacement{partition_});
      if (!placement) throw std::runtime_error(fmt::format("partition {}: no placement table", partition_));
      placement_epoch_ = placement->epoch;
      targets_ = std::move(placement->replicas);
      table_nodes_ = std::move(placement->nodes);
    }
    released_up_to_ = read_released(released_marker());
    auto loaded = load_latest_snapshot(dir_);
    if (!loaded) throw std::runtime_error(fmt::format("partition {}: {}", partition_, loaded.error()));
    std::optional<pr::Snapshot> found = std::move(loaded.value());
    if (released_up_to_ != 0 && co_await release_unfinished(found)) {
      log::info("partition {}: finishing the release up to {} a crash interrupted", partition_, released_up_to_);
      if (!co_await drop_released()) {
        throw std::runtime_error(fmt::format("partition {}: the WAL did not drop the released log", partition_));
      }
      found.reset();
      released_on_recovery_ = true;
    }
    if (found) {
      snapshot_ = from_wire(*found);
      machine_->restore(snapshot_->data);
      applied_ = snapshot_->meta.index;
      applied_term_ = snapshot_->meta.term;
      recovered.snapshot = snapshot_->meta;
      recovered.conf = snapshot_->meta.conf;
    } else if (config_.from_assignment()) {
      // Blank (no voters) until a snapshot says otherwise, or this replica bootstraps (below).
    } else {
      recovered.conf.voters = config_.nodes;
    }

    // The log after the snapshot, in pieces of `recovery_read_bytes`.
    std::uint64_t from = applied_ + 1;
    for (bool first = true;; first = false) {
      auto range =
          co_await ctx_.request(pw::ReadRange{partition_, from, UINT64_MAX, config_.recovery_read_bytes.bytes});
      if (!range) throw std::runtime_error(fmt::format("partition {}: WAL unreachable: {}", partition_, range.error()));
      if (!*range) throw std::runtime_error(fmt::format("partition {}: WAL read: {}", partition_, range->error()));
      const pw::Range& got = range->value();
      if (first) {
        queued_ = {got.hard_state.term, got.hard_state.vote, got.hard_state.commit};
        recovered.hard_state.term = got.hard_state.term;
        recovered.hard_state.vote = got.hard_state.vote;
        recovered.hard_state.commit = std::max(got.hard_state.commit, applied_);
      }
      for (const pw::Entry& e : got.entries) {
        auto entry = from_wal(e);
        if (!entry)
          throw std::runtime_error(fmt::format("partition {}: WAL entry {} is no Raft entry", partition_, e.index));
        recovered.entries.push_back(std::move(*entry));
      }
      if (first && got.last_index != 0 && got.last_index <= applied_) {
        // The whole log is older than the snapshot: a crash came between installing a snapshot
        // and dropping the log. Drop it now, or the next append (after the snapshot) would not
        // follow it.
        auto truncated = co_await ctx_.request(pw::TruncateAfter{partition_, 0});
        if (!truncated || !*truncated) {
          throw std::runtime_error(
              fmt::format("partition {}: dropping the log before snapshot {} failed", partition_, applied_));
        }
        break;
      }
      if (got.entries.empty() || got.entries.back().index >= got.last_index) break;
      from = got.entries.back().index + 1;
    }
    recovered.applied = applied_;
    // A commit index past the log recovered (a snapshot's log was dropped) is capped by the lib.
    log::info("partition {}: recovered term {} vote {} commit {}, {} entries after snapshot {}", partition_,
              recovered.hard_state.term, recovered.hard_state.vote, recovered.hard_state.commit,
              recovered.entries.size(), applied_);

    make_node(std::move(recovered));
    if (campaigns_at_start()) node_->campaign();
    ready_ = true;
    if (may_bootstrap_now()) start_creation();
  }

  /// A replica campaigns as soon as it starts, rather than after an election timeout for which
  /// its first writes would wait, when nobody else can lead: it is the group's only voter; or
  /// the group is new, placed by the static `nodes` list, and this node is the one the list
  /// picks to lead it first (node `nodes[partition mod count]`: one per group, so no two split
  /// the vote, and first leaders spread over the nodes). Raft's safety does not depend on when a
  /// node campaigns; if the picked node is down, the others elect after their timeouts.
  [[nodiscard]] bool campaigns_at_start() const {
    const auto& voters = node_->conf().voters;
    if (voters.size() == 1 && voters.front() == node_id_) return true;
    return new_group() && first_leader() == node_id_;
  }

  /// Nothing of the group exists here yet: no term, no log, no snapshot.
  [[nodiscard]] bool new_group() const { return node_->term() == 0 && node_->last_index() == 0 && !snapshot_; }

  /// The node the static `nodes` list picks to lead a new group first (0: placed by the table).
  [[nodiscard]] rf::NodeId first_leader() const {
    if (config_.from_assignment() || config_.nodes.empty()) return 0;
    return config_.nodes[partition_ % config_.nodes.size()];
  }

  // --- creation (placement "assignment") ----------------------------------------------------
  //
  // A partition is created once, by its owner in the table, and only with the consent of every
  // node of the manager's map: each says whether it holds or held a replica of it (a snapshot, a
  // term, a log, a release marker) and the owner creates it only if none does. A group that
  // exists anywhere in the map so never gets a second one beside it: not from a pod that became
  // owner while the old replicas were cut off, nor from one restarted blank. A node that does
  // not answer (down, cut off, without a table yet) holds the creation back until it answers or
  // the manager drops it from the map. Two owners asking at once (tables of different epochs):
  // the lower node id wins, the other gives way.

  /// Owner of a partition that holds nothing and never did: it may be new.
  [[nodiscard]] bool may_bootstrap_now() const {
    return config_.from_assignment() && owns() && !snapshot_ && jobs_.empty() && node_->term() == 0 &&
           node_->last_index() == 0 && released_up_to_ == 0;
  }

  /// This replica holds or held something of the partition, or is creating it itself.
  [[nodiscard]] bool holds() const {
    return snapshot_ || node_->term() != 0 || node_->last_index() != 0 || released_up_to_ != 0 || !jobs_.empty();
  }

  /// The nodes an owner asks: the map's, but itself.
  [[nodiscard]] std::vector<rf::NodeId> askees() const {
    std::vector<rf::NodeId> out = table_nodes_.empty() ? targets_ : table_nodes_;
    std::erase(out, node_id_);
    return out;
  }

  /// Asks every node of the map (again after a while, until the partition exists here).
  void start_creation() {
    creating_ = true;
    consents_.clear();
    create_again_in_ = 3 * config_.election_ticks + config_.reconcile_ticks;
    const auto nodes = askees();
    if (nodes.empty()) {
      create();
      return;
    }
    for (rf::NodeId node : nodes) send_creation(pr::MessageType::CreateQuery, node, false);
  }

  void send_creation(pr::MessageType type, rf::NodeId to, bool reject) {
    pr::RaftMessage message;
    message.partition = partition_;
    message.type = type;
    message.from = node_id_;
    message.to = to;
    message.reject = reject;
    std::ignore = ctx_.try_send(std::move(message));
  }

  void on_create_query(const pr::RaftMessage& query) {
    const bool mine = creating_ && node_id_ < query.from;  // both asking: the lower id creates
    if (creating_ && !mine) creating_ = false;             // the other one does
    send_creation(pr::MessageType::CreateAnswer, query.from, holds() || mine);
    // Every node of the map is asked: one that holds nothing and is no replica does not keep an
    // actor (a ticking one, as it never quiesces) for each partition created elsewhere.
    bystander_ = !holds() && !creating_ && !placed_here() && pending_.empty() && reads_asked_.empty() &&
                 conf_changes_.empty() && transfers_.empty();
  }

  void on_create_answer(const pr::RaftMessage& answer) {
    if (!creating_) return;
    if (answer.reject) {
      creating_ = false;  // it exists there (or is being created): its leader adds this replica
      log::info("partition {}: node {} holds or creates it: not created here", partition_, answer.from);
      return;
    }
    consents_.insert(answer.from);
    for (rf::NodeId node : askees()) {
      if (!consents_.contains(node)) return;
    }
    create();
  }

  void create() {
    creating_ = false;
    if (!may_bootstrap_now()) return;
    bootstrap_now();
  }

  /// The new partition's owner campaigns at once rather than after an election timeout: every
  /// replica just consented to the creation, so nobody else leads it, and its first write would
  /// otherwise wait 1 to 2 election timeouts for a leader (Raft's safety does not depend on
  /// when a node campaigns).
  void bootstrap_now() {
    rf::Recovered recovered;
    bootstrap(recovered);
    recovered.applied = applied_;
    make_node(std::move(recovered));
    node_->campaign();
  }

  /// The placement table names this node among the partition's replicas.
  [[nodiscard]] bool placed_here() const {
    return std::find(targets_.begin(), targets_.end(), node_id_) != targets_.end();
  }

  /// This node is the partition's owner in the placement table: the one that bootstraps it.
  [[nodiscard]] bool owns() const { return !targets_.empty() && targets_.front() == node_id_; }

  /// A new partition's first state, on its owner only: a snapshot at index 1 holding the empty
  /// state machine and the table's replicas as voters, durable before anything else. The other
  /// replicas start blank (no voters: they never campaign); the leader's log starts after this
  /// snapshot, so each of them receives it, and the membership with it, before any entry.
  /// The file is written on the actor's thread: it holds an empty state machine, once in the
  /// partition's life, and no Node exists yet that could serve anything meanwhile; its callers
  /// (recovery, ticks, placement) would otherwise each need a state for "bootstrap in flight".
  void bootstrap(rf::Recovered& recovered) {
    rf::Snapshot first;
    first.meta.index = 1;
    first.meta.term = 1;
    first.meta.conf.voters = targets_;
    first.data = machine_->snapshot();
    auto written = write_snapshot(dir_, to_wire(first));
    if (!written) throw std::runtime_error(fmt::format("partition {}: bootstrap: {}", partition_, written.error()));
    applied_ = 1;
    applied_term_ = 1;
    recovered.snapshot = first.meta;
    recovered.conf = first.meta.conf;
    recovered.hard_state.commit = std::max<rf::Index>(recovered.hard_state.commit, 1);
    snapshot_ = std::move(first);
    log::info("partition {}: bootstrapped with voters {}", partition_, fmt::join(targets_, ","));
  }

  void make_node(rf::Recovered recovered) {
    rf::Config raft;
    raft.id = node_id_;
    raft.election_tick = static_cast<int>(config_.election_ticks);
    raft.heartbeat_tick = static_cast<int>(config_.heartbeat_ticks);
    raft.pre_vote = config_.pre_vote;
    raft.check_quorum = config_.check_quorum;
    raft.max_inflight = config_.max_inflight;
    raft.max_bytes_per_append = config_.max_append_bytes.bytes;
    raft.quiesce_after_ticks = static_cast<int>(config_.quiesce_after_ticks);
    // Different on every replica and partition, so their election timeouts differ; from the
    // system's clock, so that a simulated cluster's seed replays the same timeouts.
    raft.seed = (partition_ * 0x9E3779B97F4A7C15ull) ^ (node_id_ * 0xC2B2AE3D27D4EB4Full) ^
                static_cast<std::uint64_t>(now().time_since_epoch().count());
    node_ = std::make_unique<rf::Node>(raft, std::move(recovered), [this] { return snapshot_; });
  }

  // --- handlers -----------------------------------------------------------------------------

  void on_tick(const Tick&) {
    ++ticks_taken_;
    node_->tick();
    tell_removed();
    // A voter that knows no leader: the partition cannot take writes through this replica. The
    // rate of this counter is the replicas without a leader, in ticks per second (alerts.yml).
    // A replica the placement table moved away is not counted: it may not have learnt its
    // removal (it was down then) and campaigns in vain.
    const bool placed_here =
        targets_.empty() || std::find(targets_.begin(), targets_.end(), node_id_) != targets_.end();
    if (node_->leader() == 0 && node_->conf().is_voter(node_id_) && placed_here) {
      metrics::increment_counter("elfin_partition_leaderless_ticks_total");
    }
    expire(now());
    if (create_again_in_ != 0) {
      --create_again_in_;
      if (create_again_in_ == 0 && may_bootstrap_now()) start_creation();
    }
    if (config_.from_assignment() && ++reconcile_elapsed_ >= config_.reconcile_ticks) {
      reconcile_elapsed_ = 0;
      reconcile();
    }
  }

  // --- placement (config placement = "assignment") ------------------------------------------

  void on_placement(const PlacementChanged& changed) {
    if (!config_.from_assignment() || changed.epoch <= placement_epoch_) return;
    PlacementOf mine = changed.of(partition_);
    placement_epoch_ = mine.epoch;
    targets_ = std::move(mine.replicas);
    table_nodes_ = std::move(mine.nodes);
    // Owner now of a partition nobody ever started here: it may be new (start_creation).
    if (may_bootstrap_now() && !creating_) start_creation();
  }

  /// On the leader: the next step of the membership toward the placement table (None elsewhere).
  [[nodiscard]] ReconcileStep reconcile_step() const {
    if (!config_.from_assignment() || node_->role() != rf::Role::Leader || targets_.empty()) return {};
    return next_step(
        node_->conf(), targets_, node_id_, [this](rf::NodeId node) { return node_->match(node); }, node_->last_index());
  }

  /// On the leader: one step of the membership toward the placement table (reconcile.hpp).
  void reconcile() {
    const ReconcileStep step = reconcile_step();
    using Kind = ReconcileStep::Kind;
    const auto change = [&](rf::ConfChangeKind kind, std::string_view what) {
      // Refused while another change is uncommitted or the term has no commit yet: next time.
      if (node_->propose_conf_change(rf::ConfChange{kind, step.node})) {
        log::info("partition {}: {} node {} (placement epoch {})", partition_, what, step.node, placement_epoch_);
      }
    };
    switch (step.kind) {
      case Kind::None:
        return;
      case Kind::AddLearner:
        return change(rf::ConfChangeKind::AddLearner, "adding as a learner");
      case Kind::Promote:
        return change(rf::ConfChangeKind::AddVoter, "promoting");
      case Kind::Remove:
        // A live replica that lags gets a few rounds to catch up first: it must hold the removal
        // entry to learn of its removal (and clean up); a dead one is removed after them.
        if (step.node != node_id_ && node_->match(step.node).value_or(0) < node_->last_index() &&
            remove_waits_ < kRemoveWaits) {
          ++remove_waits_;
          return;
        }
        remove_waits_ = 0;
        removing_ = step.node;
        return change(rf::ConfChangeKind::RemoveNode, "removing");
      case Kind::TransferLeader:
        if (node_->transferee() == 0) {
          log::info("partition {}: leaving (placement epoch {}): leadership to node {}", partition_, placement_epoch_,
                    step.node);
          node_->transfer_leadership(step.node);
        }
        return;
    }
  }

  /// Started by the placement table's actor (a replica placed elsewhere): recovery was the point.
  void on_wake(const Wake&) {}

  /// The liveness actor: the node this replica's leader is on went silent.
  void on_leader_down(const LeaderDown& down) { node_->report_node_down(down.node); }

  /// The liveness actor: a follower's node went down (the Node may sleep without it) or is back
  /// (a Node that sleeps without it wakes to catch it up).
  void on_follower_liveness(const FollowerLiveness& follower) {
    if (follower.down) {
      node_->report_node_down(follower.node);
    } else {
      node_->report_node_up(follower.node);
    }
  }

  /// A leader registers its followers' nodes with the liveness actor, again when they change.
  void watch_followers() {
    if (role_ != rf::Role::Leader) {
      watched_conf_.reset();
      return;
    }
    const rf::ConfState& conf = node_->conf();
    if (watched_conf_ && *watched_conf_ == conf) return;
    watched_conf_ = conf;
    WatchFollowers watch{partition_, {}};
    for (const auto* ids : {&conf.voters, &conf.learners, &conf.voters_outgoing}) {
      for (rf::NodeId id : *ids) {
        if (id != node_id_ && std::find(watch.followers.begin(), watch.followers.end(), id) == watch.followers.end()) {
          watch.followers.push_back(id);
        }
      }
    }
    // Local, and once per leadership or membership change: unbounded, like WatchLeader.
    std::ignore = ctx_.unbounded_send_to(ctx_.group_addr(), std::move(watch));
  }

  /// Stops the ticks once the Node is quiesced and nothing waits for a deadline or a write (a
  /// quiesced Node ignores ticks anyway); starts them again when it wakes. A leader with a step
  /// toward a new placement table left keeps ticking: the steps are taken on ticks, and the
  /// first one (a membership change) wakes the Node.
  void sleep_or_wake() {
    const bool telling = removed_peer_ && removed_peer_->matched >= removed_peer_->index;
    const bool idle = !telling && node_->quiesced() && pending_.empty() && conf_changes_.empty() &&
                      reads_asked_.empty() && reads_ready_.empty() && transfers_.empty() && jobs_.empty() &&
                      create_again_in_ == 0 && reconcile_step().kind == ReconcileStep::Kind::None;
    if (idle == asleep_) return;
    asleep_ = idle;
    if (idle) {
      ticks().stop();
      // Only a follower has a leader elsewhere to watch: a sleeping leader (a lone voter's sleeps
      // come and go with every write) learns of its followers' nodes through WatchFollowers.
      const rf::NodeId leader = node_->leader();
      if (leader != 0 && leader != node_id_) {
        watching_leader_ = true;
        // Local and one per sleep: unbounded, so that a thousand partitions falling asleep at
        // once are all registered.
        std::ignore = ctx_.unbounded_send_to(ctx_.group_addr(), WatchLeader{partition_, leader});
      }
    } else {
      ticks().start_on_grid(config_.tick);
      unwatch_leader();
    }
  }

  void unwatch_leader() {
    if (!std::exchange(watching_leader_, false)) return;
    std::ignore = ctx_.unbounded_send_to(ctx_.group_addr(), Unwatch{partition_});
  }

  void on_raft_message(const pr::RaftMessage& message) {
    if (message.to != node_id_) return;  // misrouted: not for this replica
    if (message.type == pr::MessageType::NotMember) {
      on_not_member(message);
      return;
    }
    if (message.type == pr::MessageType::CreateQuery) {
      on_create_query(message);
      return;
    }
    if (message.type == pr::MessageType::CreateAnswer) {
      on_create_answer(message);
      return;
    }
    auto m = from_wire(message);
    if (!m) {
      log::debug("partition {}: dropped a Raft message of a type this build does not know", partition_);
      return;
    }
    if (m->type == rf::MessageType::InstallSnapshot && m->snapshot && m->snapshot->meta.index < released_up_to_) {
      // The WAL forgot this replica's indexes up to released_up_to_ when it was removed: entries
      // after an older snapshot would not be read back after a restart. The leader sends a newer
      // one (it snapshots when it adds a learner).
      log::info("partition {}: refused snapshot {} below the index {} released at a removal", partition_,
                m->snapshot->meta.index, released_up_to_);
      return;
    }
    const bool vote_request = m->type == rf::MessageType::PreVote || m->type == rf::MessageType::Vote;
    if (vote_request && released_blank()) {
      // Its log is gone, so any candidate's log looks up to date to it: one that missed what was
      // committed before the release (a replica restarted from an old snapshot, with a membership
      // that still counts this node) would win with such votes and serve reads from that old state.
      // No membership counts this replica as a voter before it holds a snapshot past the release.
      log::debug("partition {}: ignored a vote request from node {}: released up to {}, nothing held since", partition_,
                 m->from, released_up_to_);
      return;
    }
    // A replica removed while it was down campaigns when it restarts: the only sign of it.
    if (vote_request) tell_not_member(m->from);
    if (removed_peer_ && m->from == removed_peer_->node) {
      // The node removed last acknowledged the append carrying its removal: tell it.
      if (m->type == rf::MessageType::AppendResponse && !m->reject && m->term == removed_peer_->term) {
        removed_peer_->matched = std::max(removed_peer_->matched, m->index);
        tell_removed();
      }
    }
    node_->step(*m);
  }

  [[nodiscard]] pr::RaftError not_leader() const {
    // A replica that knows no leader (placed by the table: a blank one, or no replica at all)
    // points at the owner, which bootstraps or leads the partition.
    rf::NodeId hint = node_->leader();
    if (hint == 0 && config_.from_assignment() && !targets_.empty() && targets_.front() != node_id_) {
      hint = targets_.front();
    }
    // A new group placed by the static list: the node that campaigns first (campaigns_at_start),
    // which a request there also starts.
    if (hint == 0 && new_group() && first_leader() != node_id_) {
      hint = first_leader();
    }
    return pr::RaftError{pr::RaftErrorKind::NotLeader, partition_, hint,
                         fmt::format("node {} is not the leader", node_id_)};
  }

  void on_propose(const pr::Propose& propose, ResponseToken<pr::Propose> token) {
    if (propose.command.empty()) {
      // An empty entry is Raft's no-op, skipped when applied: it would never be answered.
      std::move(token).respond(Err{pr::RaftError{pr::RaftErrorKind::BadRequest, partition_, 0, "an empty command"}});
      return;
    }
    if (node_->role() != rf::Role::Leader) {
      std::move(token).respond(Err{not_leader()});
      return;
    }
    auto index = node_->propose(propose.command);
    if (!index) {
      std::move(token).respond(Err{rejected(index.error())});
      return;
    }
    pending_.insert_or_assign(*index, Pending{node_->term(), std::move(token), deadline()});
  }

  [[nodiscard]] pr::RaftError rejected(const rf::ProposeRejected& why) const {
    if (why.error == rf::ProposeError::NotLeader) {
      return pr::RaftError{pr::RaftErrorKind::NotLeader, partition_, why.leader_hint,
                           fmt::format("node {} is not the leader", node_id_)};
    }
    if (why.error == rf::ProposeError::Invalid) {
      return pr::RaftError{
          pr::RaftErrorKind::BadRequest, partition_, why.leader_hint,
          "a membership change that makes no sense (an existing member, a non-member, the last voter)"};
    }
    return pr::RaftError{pr::RaftErrorKind::Dropped, partition_, why.leader_hint,
                         "the leader refused the proposal (a transfer or too much uncommitted)"};
  }

  void on_read(const pr::Read& read, ResponseToken<pr::Read> token) {
    if (read.stale && config_.from_assignment() && !snapshot_) {
      // A blank replica holds nothing yet, not even an old state.
      std::move(token).respond(Err{not_leader()});
      return;
    }
    if (read.stale) {
      std::move(token).respond(pr::ReadResult{partition_, applied_, machine_->query(read.query)});
      return;
    }
    if (node_->role() != rf::Role::Leader) {
      std::move(token).respond(Err{not_leader()});
      return;
    }
    const std::uint64_t id = ++next_read_;
    node_->read_index(read_context(id));
    reads_asked_.emplace(id, PendingRead{read.query, std::move(token), deadline()});
  }

  void on_status(const pr::GetPartitionStatus&, ResponseToken<pr::GetPartitionStatus> token) {
    pr::PartitionStatus status;
    status.partition = partition_;
    status.node = node_id_;
    status.role = wire_role(node_->role());
    status.term = node_->term();
    status.leader = node_->leader();
    status.commit = node_->commit();
    status.applied = applied_;
    status.last_index = node_->last_index();
    status.snapshot_index = snapshot_ ? snapshot_->meta.index : 0;
    status.conf = to_wire(node_->conf());
    status.ready = ready_;
    status.quiesced = node_->quiesced();
    status.ticks = ticks_taken_;
    std::move(token).respond(std::move(status));
  }

  template <class Request>
  void change_membership(const Request& request, ResponseToken<Request> token, rf::ConfChangeKind kind) {
    if (node_->role() != rf::Role::Leader) {
      std::move(token).respond(Err{not_leader()});
      return;
    }
    if (request.node == 0) {
      std::move(token).respond(Err{pr::RaftError{pr::RaftErrorKind::BadRequest, partition_, 0, "node 0"}});
      return;
    }
    auto index = node_->propose_conf_change(rf::ConfChange{kind, request.node});
    if (!index) {
      std::move(token).respond(Err{rejected(index.error())});
      return;
    }
    conf_changes_.insert_or_assign(*index, PendingConf{node_->term(), std::move(token), deadline()});
  }

  void on_add_replica(const pr::AddReplica& add, ResponseToken<pr::AddReplica> token) {
    change_membership(add, std::move(token),
                      add.learner ? rf::ConfChangeKind::AddLearner : rf::ConfChangeKind::AddVoter);
  }

  void on_remove_replica(const pr::RemoveReplica& remove, ResponseToken<pr::RemoveReplica> token) {
    removing_ = remove.node;
    change_membership(remove, std::move(token), rf::ConfChangeKind::RemoveNode);
  }

  void on_transfer(const pr::TransferLeader& transfer, ResponseToken<pr::TransferLeader> token) {
    if (node_->role() == rf::Role::Leader && transfer.to == node_id_) {
      std::move(token).respond(pr::LeaderTransferred{partition_, node_id_, node_->term()});
      return;
    }
    if (node_->role() != rf::Role::Leader) {
      std::move(token).respond(Err{not_leader()});
      return;
    }
    node_->transfer_leadership(transfer.to);
    transfers_.push_back(PendingTransfer{transfer.to, std::move(token), deadline()});
  }

  [[nodiscard]] Clock::time_point deadline() const { return now() + config_.proposal_timeout; }

  /// The system's clock (System::now): the steady clock, or virtual time in a simulated cluster,
  /// where deadlines then pass with the cluster's time and not with the machine's.
  [[nodiscard]] Clock::time_point now() const { return ctx_.now(); }

  // --- the Ready loop -----------------------------------------------------------------------

  /// Takes every Ready the Node has: sends, serves and applies what needs no disk at once, and
  /// queues the writes (the persister below performs them in order).
  void drive() {
    while (node_->has_ready()) {
      // How far the node being removed matches, read while it is still tracked (the Ready applies
      // the removal and forgets it).
      if (removing_ != 0) {
        if (const auto match = node_->match(removing_)) removing_match_ = *match;
      }
      rf::Ready ready = node_->ready();
      observe(ready);
      send(ready.messages);
      take_reads(ready.reads);
      Job job;
      job.id = ready.id;
      job.snapshot = std::move(ready.snapshot);
      job.entries = std::move(ready.entries);
      // A change of the commit index alone need not be durable (it is learned again from the
      // leader); term and vote must, before the messages that depend on them.
      if (ready.hard_state && (ready.hard_state->term != queued_.term || ready.hard_state->vote != queued_.vote)) {
        job.hard_state = ready.hard_state;
        queued_ = *ready.hard_state;
      }
      job.after = std::move(ready.messages_after_persist);
      // Committed entries are durable here already; they wait only behind a snapshot to install
      // (and behind entries waiting for one, to keep the order).
      const bool behind = !jobs_.empty() && jobs_.back().deferred;
      if (job.snapshot || behind) {
        job.deferred = true;
        job.committed = std::move(ready.committed);
      } else {
        apply(ready.committed);
      }
      const bool writes = job.snapshot || !job.entries.empty() || job.hard_state;
      if (!writes && jobs_.empty()) {
        finish(job);
        continue;
      }
      jobs_.push_back(std::move(job));
    }
    serve_reads();
    maybe_snapshot();
    persist();
  }

  /// jobs_[posted_] may go to the persister: a received snapshot waits while this replica's own
  /// snapshot file is written (one snapshot file write per partition at a time).
  [[nodiscard]] bool can_persist() const { return posted_ < jobs_.size() && !(jobs_[posted_].snapshot && writing_); }

  void persist() {
    if (persisting_ || !can_persist()) return;
    persisting_ = true;
    ctx_.attach(Stream::generate(&PartitionActor::persister, this));
  }

  /// What remains of a Ready once its writes are durable: the Node learns it, the messages that
  /// count them go out, and deferred entries are applied.
  void finish(Job& job) {
    if (job.snapshot) restore(*job.snapshot);
    node_->advance(job.id);
    send(job.after);
    if (job.deferred) apply(job.committed);
  }

  /// The persister's report: the next queued Ready is durable (or the WAL refused it).
  void on_persisted(const Persisted& persisted) {
    if (!persisted.error.empty()) throw std::runtime_error(persisted.error);
    if (jobs_.empty() || jobs_.front().id > persisted.id) {
      throw std::logic_error(fmt::format("partition {}: ready {} persisted out of order", partition_, persisted.id));
    }
    // Every Ready up to that one is durable (they were written together).
    while (!jobs_.empty() && jobs_.front().id <= persisted.id) {
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      --posted_;
      finish(job);
    }
    serve_reads();
    maybe_snapshot();
  }

  /// Writes the queued Readies to disk, all that queued meanwhile in one go (one AppendBatch, so
  /// one fdatasync of the WAL for many Readies), reporting the last one written (a stream next to
  /// the actor: it runs while the actor waits in `recv`, so the actor keeps stepping messages and
  /// taking new Readies while the WAL syncs). Ends when the queue is empty, or when a received
  /// snapshot is next while the actor's own snapshot file is written (persist() starts it again).
  static Task<> persister(Emitter emitter, PartitionActor* self) {
    while (self->can_persist()) {
      // A received snapshot starts a group of its own (its log reset comes before any entry).
      const std::size_t first = self->posted_;
      std::size_t end = first + 1;
      while (end < self->jobs_.size() && !self->jobs_[end].snapshot) ++end;
      self->posted_ = end;
      Persisted done{self->jobs_[end - 1].id, {}};
      done.error = co_await self->write(first, end);
      auto emitting = emitter.emit(std::move(done));
      co_await emitting;
    }
    self->persisting_ = false;
  }

  /// The writes of jobs_[first, end), in the order recovery relies on: a received snapshot's file
  /// first (durable), then the old log dropped, then the entries (a later Ready's entries replace
  /// an earlier one's from their first index on, the WAL rule), then the latest term and vote.
  /// "" or what failed. The jobs stay put meanwhile (a deque keeps its elements in place when
  /// others are added at the back, and the actor removes only jobs already written).
  Task<std::string> write(std::size_t first, std::size_t end) {
    if (const auto& snapshot = jobs_[first].snapshot) {
      auto writing = ctx_.blocking([dir = dir_, wire = to_wire(*snapshot)] { return write_snapshot_file(dir, wire); });
      auto written = co_await writing;
      if (!written) co_return fmt::format("partition {}: snapshot: {}", partition_, written.error());
      auto truncated = co_await ctx_.request(pw::TruncateAfter{partition_, 0});
      if (!truncated) co_return fmt::format("partition {}: WAL unreachable: {}", partition_, truncated.error());
      if (!*truncated) co_return fmt::format("partition {}: WAL truncate: {}", partition_, truncated->error());
    }
    pw::AppendBatch batch{partition_, {}};
    std::optional<rf::HardState> hard_state;
    for (std::size_t i = first; i < end; ++i) {
      const Job& job = jobs_[i];
      if (!job.entries.empty()) {
        const rf::Index from = job.entries.front().index;
        while (!batch.entries.empty() && batch.entries.back().index >= from) batch.entries.pop_back();
        for (const rf::Entry& e : job.entries) batch.entries.push_back(to_wal(e));
      }
      if (job.hard_state) hard_state = job.hard_state;
    }
    if (!batch.entries.empty()) {
      auto appended = co_await ctx_.request(std::move(batch));
      if (!appended) co_return fmt::format("partition {}: WAL unreachable: {}", partition_, appended.error());
      if (!*appended) co_return fmt::format("partition {}: WAL append: {}", partition_, appended->error());
    }
    if (hard_state) {
      const rf::HardState& state = *hard_state;
      auto saved = co_await ctx_.request(pw::SaveHardState{partition_, {state.term, state.vote, state.commit}});
      if (!saved) co_return fmt::format("partition {}: WAL unreachable: {}", partition_, saved.error());
      if (!*saved) co_return fmt::format("partition {}: WAL hard state: {}", partition_, saved->error());
    }
    co_return std::string{};
  }

  /// The soft state of a Ready: who leads now.
  void observe(const rf::Ready& ready) {
    const bool was_leader = role_ == rf::Role::Leader;
    role_ = ready.role;
    watch_followers();
    if (was_leader && role_ != rf::Role::Leader) {
      // A read not yet confirmed by a former leader could miss writes of the new one.
      for (auto& [id, read] : reads_asked_) std::move(read.token).respond(Err{not_leader()});
      reads_asked_.clear();
    }
    for (auto it = transfers_.begin(); it != transfers_.end();) {
      if (ready.leader == it->to && ready.role != rf::Role::Candidate && ready.leader != 0) {
        std::move(it->token).respond(pr::LeaderTransferred{partition_, ready.leader, ready.term});
        it = transfers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// ReadIndex answers: a confirmed read waits until its index is applied (persistence of this
  /// replica's own log does not matter to it).
  void take_reads(std::vector<rf::ReadState>& reads) {
    for (rf::ReadState& read : reads) {
      const auto id = read_id(read.context);
      if (!id) continue;
      auto it = reads_asked_.find(*id);
      if (it == reads_asked_.end()) continue;  // timed out meanwhile
      if (read.rejected) {
        std::move(it->second.token).respond(Err{not_leader()});
      } else {
        reads_ready_.emplace(read.index, std::move(it->second));
      }
      reads_asked_.erase(it);
    }
  }

  void send(std::vector<rf::Message>& messages) {
    for (rf::Message& m : messages) {
      if (m.periodic && config_.coalesce_heartbeats &&
          (m.type == rf::MessageType::Heartbeat || m.type == rf::MessageType::HeartbeatResponse)) {
        // With the node's next ping to that node (liveness.hpp). Local, one per partition and
        // follower per heartbeat interval: unbounded, like WatchLeader.
        std::ignore = ctx_.unbounded_send_to(ctx_.group_addr(), OutgoingBeat{m.to, to_beat(partition_, m)});
        continue;
      }
      const rf::NodeId to = m.to;
      const bool snapshot = m.type == rf::MessageType::InstallSnapshot;
      // Never waits: a full forwarder drops the message, which Raft sends again.
      auto sent = ctx_.try_send(to_wire(partition_, m));
      if (!sent) node_->report_unreachable(to);
      if (snapshot) node_->report_snapshot(to, static_cast<bool>(sent));
    }
  }

  /// A snapshot from the leader, now durable as a file (and the old log dropped): the state
  /// machine takes it.
  void restore(const rf::Snapshot& snapshot) {
    if (snapshot.meta.index <= applied_) return;  // older than what this replica has
    machine_->restore(snapshot.data);
    applied_ = snapshot.meta.index;
    applied_term_ = snapshot.meta.term;
    snapshot_ = snapshot;
    // The proposals at or below it were applied elsewhere; their responses are not known here.
    while (!pending_.empty() && pending_.begin()->first <= applied_) {
      std::move(pending_.begin()->second.token)
          .respond(Err{pr::RaftError{pr::RaftErrorKind::Dropped, partition_, node_->leader(),
                                     "a snapshot replaced the log: the outcome is unknown here"}});
      pending_.erase(pending_.begin());
    }
    log::info("partition {}: installed a snapshot at index {} term {}", partition_, applied_, applied_term_);
  }

  void apply(const std::vector<rf::Entry>& committed) {
    for (const rf::Entry& entry : committed) {
      if (entry.index <= applied_) continue;
      pr::Bytes response;
      if (entry.kind == rf::EntryKind::Normal && !entry.data.empty())
        response = machine_->apply(entry.index, entry.data);
      applied_ = entry.index;
      applied_term_ = entry.term;
      if (entry.kind == rf::EntryKind::ConfChange) applied_membership(entry);
      if (auto it = pending_.find(entry.index); it != pending_.end()) {
        if (it->second.term == entry.term) {
          std::move(it->second.token).respond(pr::Proposed{partition_, entry.index, entry.term, std::move(response)});
        } else {
          std::move(it->second.token)
              .respond(Err{pr::RaftError{pr::RaftErrorKind::Dropped, partition_, node_->leader(),
                                         fmt::format("a new leader replaced the entry at index {}", entry.index)}});
        }
        pending_.erase(it);
      }
      if (auto it = conf_changes_.find(entry.index); it != conf_changes_.end()) {
        const bool same = it->second.term == entry.term && entry.kind == rf::EntryKind::ConfChange;
        std::visit(
            [&](auto& token) {
              if (same) {
                std::move(token).respond(pr::MembershipChanged{partition_, entry.index, to_wire(node_->conf())});
              } else {
                std::move(token).respond(Err{pr::RaftError{pr::RaftErrorKind::Dropped, partition_, node_->leader(),
                                                           "a new leader replaced the change"}});
              }
            },
            it->second.token);
        conf_changes_.erase(it);
      }
    }
  }

  void serve_reads() {
    while (!reads_ready_.empty() && reads_ready_.begin()->first <= applied_) {
      PendingRead& read = reads_ready_.begin()->second;
      std::move(read.token).respond(pr::ReadResult{partition_, applied_, machine_->query(read.query)});
      reads_ready_.erase(reads_ready_.begin());
    }
  }

  /// Every `snapshot_every` applied entries: the state machine to a file (written off the
  /// workers), then, once it is durable (on_snapshot_written), the Node may drop its log up to it,
  /// and so may the WAL (a Checkpoint, not waited for: the snapshot is durable, a failed
  /// checkpoint only keeps segments longer).
  void maybe_snapshot() {
    if (writing_ || received_snapshot_queued()) return;
    const std::uint64_t last = snapshot_ ? snapshot_->meta.index : 0;
    if (applied_ < last + config_.snapshot_every && !(snapshot_soon_ && applied_ > last)) return;
    snapshot_soon_ = false;
    rf::Snapshot snapshot;
    snapshot.meta.index = applied_;
    snapshot.meta.term = applied_term_;
    snapshot.meta.conf = node_->conf();
    snapshot.data = machine_->snapshot();
    auto wire = to_wire(snapshot);
    writing_ = std::move(snapshot);
    ctx_.attach(Stream::once(write_own_snapshot(ctx_, dir_, std::move(wire))));
  }

  [[nodiscard]] bool received_snapshot_queued() const {
    return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& job) { return job.snapshot.has_value(); });
  }

  /// The file write and its syncs, on the blocking pool. The lambda owns its copies: if the actor
  /// ends meanwhile, the write still finishes and its report is dropped.
  static Task<SnapshotWritten> write_own_snapshot(PartitionContext ctx, std::string dir, pr::Snapshot snapshot) {
    const std::uint64_t index = snapshot.index;
    auto writing = ctx.blocking(
        [dir = std::move(dir), snapshot = std::move(snapshot)] { return write_snapshot_file(dir, snapshot); });
    auto written = co_await writing;
    co_return SnapshotWritten{index, written ? std::string{} : written.error()};
  }

  void on_snapshot_written(const SnapshotWritten& written) {
    if (!written.error.empty())
      throw std::runtime_error(fmt::format("partition {}: snapshot: {}", partition_, written.error));
    rf::Snapshot snapshot = std::move(*writing_);  // NOLINT(bugprone-unchecked-optional-access): set until this report
    writing_.reset();
    snapshot_ = std::move(snapshot);
    node_->compact(written.index);
    ctx_.attach(Stream::once(checkpoint(ctx_, partition_, written.index)));
    persist();  // a received snapshot may have waited for this write
    maybe_snapshot();
  }

  static Task<CheckpointDone> checkpoint(PartitionContext ctx, std::uint64_t partition, std::uint64_t index) {
    auto checkpointed = co_await ctx.request(pw::Checkpoint{partition, index});
    co_return CheckpointDone{index, checkpointed && *checkpointed};
  }

  void on_checkpointed(const CheckpointDone& checkpointed) {
    if (!checkpointed.ok) log::warn("partition {}: WAL checkpoint at {} failed", partition_, checkpointed.index);
  }

  // --- removal -----------------------------------------------------------------------------

  /// A membership change just applied here (the Node's conf already has it).
  void applied_membership(const rf::Entry& entry) {
    const auto change = rf::decode_conf_change(entry.data);
    if (!change) return;
    if (change->kind == rf::ConfChangeKind::RemoveNode && change->node == node_id_ &&
        !node_->conf().is_member(node_id_)) {
      log::info("partition {}: removed from the membership at index {}", partition_, entry.index);
      removed_ = true;
    } else if (change->kind == rf::ConfChangeKind::RemoveNode && change->node == removing_) {
      // The removed node hears from nobody any more: tell it its removal is committed, once it
      // is known to hold the entry (now, or when its answer to the append carrying it comes).
      removed_peer_ = RemovedPeer{removing_, entry.index, node_->term(), removing_match_};
      tell_removed();
      removing_ = 0;
      removing_match_ = 0;
    } else if (change->kind == rf::ConfChangeKind::AddLearner && node_->role() == rf::Role::Leader) {
      // The learner catches up from a snapshot: a recent one (a replica removed before refuses
      // those below what it released).
      snapshot_soon_ = true;
    }
  }

  /// A Heartbeat to the node this leader removed, with the removal's index as commit, once that
  /// node is known to hold the entry (its log matches this leader's up to `matched`): it commits
  /// and applies its removal. Sent again on the next tick when the forwarder was full.
  void tell_removed() {
    if (!removed_peer_ || removed_peer_->matched < removed_peer_->index) return;
    if (node_->term() != removed_peer_->term || node_->role() != rf::Role::Leader) {
      removed_peer_.reset();  // a new leader does not know this replica any more
      return;
    }
    rf::Message told;
    told.type = rf::MessageType::Heartbeat;
    told.from = node_id_;
    told.to = removed_peer_->node;
    told.term = removed_peer_->term;
    told.commit = removed_peer_->index;
    if (ctx_.try_send(to_wire(partition_, told))) removed_peer_.reset();
  }

  /// Whether `node` is in `conf` in any role.
  [[nodiscard]] static bool in_conf(const rf::ConfState& conf, rf::NodeId node) {
    return conf.is_member(node) ||
           std::find(conf.voters_outgoing.begin(), conf.voters_outgoing.end(), node) != conf.voters_outgoing.end();
  }

  /// A member asked for its vote by a node outside the membership it applied, which the placement
  /// table does not place here either: that node was removed without learning it (down then, or
  /// cut off before the leader could tell it) and still holds its replica, campaigning in vain
  /// (one alive at its removal learns it from the leader: tell_removed). It is told
  /// the index this membership was applied up to (on_not_member decides what that means for it).
  void tell_not_member(rf::NodeId from) {
    if (!config_.from_assignment() || from == 0 || from == node_id_) return;
    const rf::ConfState& conf = node_->conf();
    if (!in_conf(conf, node_id_) || in_conf(conf, from)) return;
    if (std::find(targets_.begin(), targets_.end(), from) != targets_.end()) return;  // to be added (again)
    pr::RaftMessage told;
    told.partition = partition_;
    told.type = pr::MessageType::NotMember;
    told.from = node_id_;
    told.to = from;
    told.term = node_->term();
    told.index = node_->applied();
    std::ignore = ctx_.try_send(std::move(told));
  }

  /// Told by a member that this node is not in the membership it applied up to `index`. A re-add
  /// would come after `index`, and this replica would then hold entries or a snapshot after it;
  /// a log ending below it means this replica is not a member and never will be again without a
  /// new add (which starts it blank). Unless the table places it here, it releases its replica
  /// then, as it would on applying its own removal.
  void on_not_member(const pr::RaftMessage& told) {
    if (!config_.from_assignment() || removed_ || told.index == 0) return;
    if (std::find(targets_.begin(), targets_.end(), node_id_) != targets_.end()) return;
    if (node_->role() == rf::Role::Leader || node_->last_index() >= told.index || applied_ >= told.index) return;
    if (!snapshot_ && node_->last_index() == 0) return;  // blank: nothing to release
    log::info(
        "partition {}: node {} applied a membership without this replica up to index {} (this log ends at {}): "
        "removed while it could not learn it, released",
        partition_, told.from, told.index, node_->last_index());
    removed_ = true;
  }

  /// Released at a removal and holding no snapshot at or past the released index since: a re-add
  /// installs one (it refuses older ones) before the leader makes this replica a voter again.
  [[nodiscard]] bool released_blank() const { return released_up_to_ != 0 && applied_ < released_up_to_; }

  [[nodiscard]] std::filesystem::path released_marker() const {
    return std::filesystem::path(config_.snapshot_dir) / fmt::format("{}.released", partition_);
  }

  static rf::Index read_released(const std::filesystem::path& marker) {
    std::ifstream in(marker);
    rf::Index index = 0;
    in >> index;
    return in ? index : 0;
  }

  /// Writes the marker durably (file and directory synced): it must outlive the checkpoint.
  static bool write_released(const std::filesystem::path& marker, rf::Index index) {
    const std::string text = fmt::format("{}\n", index);
    const std::string temp = marker.string() + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!written || ::rename(temp.c_str(), marker.c_str()) != 0) return false;
    const int dir = ::open(marker.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return false;
    const bool synced = ::fsync(dir) == 0;
    ::close(dir);
    return synced;
  }

  /// The end of a removed replica: nothing of it stays but the marker.
  Task<> release() {
    fail_everything(pr::RaftErrorKind::NotLeader, "this replica was removed from the partition's membership");
    ticks().stop();
    unwatch_leader();
    const rf::Index last = std::max({node_->last_index(), applied_, released_up_to_});
    std::error_code error;
    std::filesystem::create_directories(config_.snapshot_dir, error);
    if (!write_released(released_marker(), last)) {
      log::warn("partition {}: cannot write {}; the WAL keeps the removed replica's log", partition_,
                released_marker().string());
      co_return;
    }
    released_up_to_ = last;
    const bool ok = co_await drop_released();
    log::info("partition {}: removed replica cleaned up{}", partition_,
              ok ? fmt::format(": WAL log dropped, released up to {}, snapshots deleted", last)
                 : std::string(" partly: the WAL did not confirm it, the snapshots stay until a restart"));
  }

  /// What a released replica held goes, after the marker (the release's point of no return), in
  /// an order a crash may cut anywhere: the WAL's log, a checkpoint at the released index (its
  /// segments retire), and last the snapshot directory, whose presence gets the replica started
  /// again after a restart (the placement table wakes the replicas a node holds) so that its
  /// recovery finishes the job. false: the WAL did not confirm; the directory stays.
  Task<bool> drop_released() {
    auto truncated = co_await ctx_.request(pw::TruncateAfter{partition_, 0});
    auto checkpointed = co_await ctx_.request(pw::Checkpoint{partition_, released_up_to_});
    if (!truncated || !*truncated || !checkpointed || !*checkpointed) co_return false;
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
    if (error) log::warn("partition {}: removing {}: {}", partition_, dir_, error.message());
    co_return true;
  }

  /// With a release marker: whether what this replica holds is what a release left behind when a
  /// crash cut it short: nothing past the released index (a replica added back since holds a
  /// snapshot at or past it and, soon after, the log its leader sends beyond it), but something.
  /// A snapshot exactly at that index with no log after it is taken for a leftover either way:
  /// dropping it is safe, as everything up to it is committed, and the leader sends a new one.
  Task<bool> release_unfinished(const std::optional<pr::Snapshot>& found) {
    if (found && found->index > released_up_to_) co_return false;
    auto range = co_await ctx_.request(pw::ReadRange{partition_, released_up_to_ + 1, released_up_to_ + 1, 1});
    if (!range) throw std::runtime_error(fmt::format("partition {}: WAL unreachable: {}", partition_, range.error()));
    if (!*range) throw std::runtime_error(fmt::format("partition {}: WAL read: {}", partition_, range->error()));
    const rf::Index last = range->value().last_index;
    co_return last <= released_up_to_ && (found || last != 0);
  }

  // --- deadlines and shutdown ---------------------------------------------------------------

  void expire(Clock::time_point now) {
    const auto timeout = [&](std::string_view what) {
      return pr::RaftError{pr::RaftErrorKind::Timeout, partition_, node_->leader(),
                           fmt::format("{} unanswered after {} ms", what, config_.proposal_timeout.count())};
    };
    erase_expired(pending_, now, [&](Pending& p) { std::move(p.token).respond(Err{timeout("the proposal")}); });
    erase_expired(conf_changes_, now, [&](PendingConf& c) {
      std::visit([&](auto& token) { std::move(token).respond(Err{timeout("the membership change")}); }, c.token);
    });
    erase_expired(reads_asked_, now, [&](PendingRead& r) { std::move(r.token).respond(Err{timeout("the read")}); });
    erase_expired(reads_ready_, now, [&](PendingRead& r) { std::move(r.token).respond(Err{timeout("the read")}); });
    std::erase_if(transfers_, [&](PendingTransfer& transfer) {
      if (transfer.deadline > now) return false;
      std::move(transfer.token).respond(Err{timeout("the leadership transfer")});
      return true;
    });
  }

  /// Answers (`answer`) and removes the waiters of `map` whose deadline passed.
  template <class Map, class Answer>
  static void erase_expired(Map& map, Clock::time_point now, Answer answer) {
    for (auto it = map.begin(); it != map.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      answer(it->second);
      it = map.erase(it);
    }
  }

  void fail_everything(pr::RaftErrorKind kind, const std::string& why) {
    const pr::RaftError error{kind, partition_, 0, why};
    for (auto& [index, p] : pending_) std::move(p.token).respond(Err{error});
    for (auto& [index, c] : conf_changes_) {
      std::visit([&](auto& token) { std::move(token).respond(Err{error}); }, c.token);
    }
    for (auto& [id, r] : reads_asked_) std::move(r.token).respond(Err{error});
    for (auto& [index, r] : reads_ready_) std::move(r.token).respond(Err{error});
    for (auto& t : transfers_) std::move(t.token).respond(Err{error});
    pending_.clear();
    conf_changes_.clear();
    reads_asked_.clear();
    reads_ready_.clear();
    transfers_.clear();
  }

  PartitionContext ctx_;
  StateMachineFactory factory_;
  std::uint64_t partition_ = 0;
  Config config_;
  rf::NodeId node_id_ = 0;
  std::string dir_;
  std::unique_ptr<StateMachine> machine_;
  std::unique_ptr<rf::Node> node_;  ///< set by recovery, before any handler runs
  bool ready_ = false;
  rf::Role role_ = rf::Role::Follower;
  std::optional<Interval<Tick>> ticks_;        ///< set once recovered
  bool asleep_ = false;                        ///< the ticks are stopped (the Node is quiesced)
  bool watching_leader_ = false;               ///< asleep, with the leader's node registered with liveness
  std::optional<rf::ConfState> watched_conf_;  ///< as last registered with the liveness actor (leader)
  std::uint64_t ticks_taken_ = 0;

  rf::HardState queued_;                  ///< the term and vote last queued for the WAL
  std::deque<Job> jobs_;                  ///< Readies not finished, oldest first
  std::size_t posted_ = 0;                ///< jobs_[0, posted_) are with the persister
  bool persisting_ = false;               ///< a persister stream runs
  std::optional<rf::Snapshot> snapshot_;  ///< the newest snapshot file's contents
  std::optional<rf::Snapshot> writing_;   ///< this replica's own snapshot, its file being written
  rf::Index applied_ = 0;
  rf::Term applied_term_ = 0;

  std::map<rf::Index, Pending> pending_;  ///< proposals by the index their entry got
  std::map<rf::Index, PendingConf> conf_changes_;
  std::uint64_t next_read_ = 0;
  std::map<std::uint64_t, PendingRead> reads_asked_;   ///< by read id, waiting for their index
  std::multimap<rf::Index, PendingRead> reads_ready_;  ///< by read index, waiting for apply
  std::vector<PendingTransfer> transfers_;

  std::uint64_t placement_epoch_ = 0;  ///< of the table `targets_` comes from
  std::vector<rf::NodeId> targets_;    ///< placement "assignment": where the replicas should be
  std::uint32_t reconcile_elapsed_ = 0;
  std::vector<rf::NodeId> table_nodes_;  ///< every node of the map (PlacementOf::nodes)
  bool creating_ = false;                ///< asking the map's nodes before creating the partition
  std::set<rf::NodeId> consents_;        ///< the nodes that said they hold nothing of it
  std::uint32_t create_again_in_ = 0;    ///< ticks until the owner asks again (0: not pending)
  bool bystander_ = false;               ///< answered a CreateQuery, holds nothing: end
  rf::NodeId removing_ = 0;              ///< a node this leader proposed to remove
  rf::Index removing_match_ = 0;         ///< how far that node's log matched, while it was tracked
  struct RemovedPeer {
    rf::NodeId node = 0;
    rf::Index index = 0;    ///< of the removal
    rf::Term term = 0;      ///< this leader's
    rf::Index matched = 0;  ///< how far its log is known to match this leader's
  };
  std::optional<RemovedPeer> removed_peer_;  ///< removed, not told yet
  bool removed_ = false;                     ///< this replica applied its own removal: clean up and end
  bool snapshot_soon_ = false;               ///< a learner was added: snapshot at the next chance
  std::uint32_t remove_waits_ = 0;           ///< reconcile rounds a removal waited for its node to catch up
  rf::Index released_up_to_ = 0;             ///< a removal here released the WAL's indexes up to this
  bool released_on_recovery_ = false;        ///< recovery finished a release a crash had cut short
};

/// The config checker: answers ValidateConfig with the problems `validate` finds (file:line each).
Task<> validator_exec(PartitionContext ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const ValidateConfig& request, ResponseToken<ValidateConfig> token) {
      ctx.respond(std::move(token), config_verdict<Config>(request.config));
    });
  }
}

}  // namespace

Task<> exec(PartitionContext ctx, StateMachineFactory state_machine) {
  if (ctx.key() == kValidatorKey) {
    co_await validator_exec(ctx);
    co_return;
  }
  if (ctx.key() == kLivenessKey) {
    co_await liveness_exec(ctx);
    co_return;
  }
  if (ctx.key() == kPlacementKey) {
    co_await placement_exec(ctx);
    co_return;
  }
  PartitionActor actor(ctx, std::move(state_machine));
  co_await actor.run();
}

}  // namespace elfin::actors::partition::internal
