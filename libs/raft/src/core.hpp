// The Raft state machine behind elfin::raft::Node. Its members are split by concept over
// core.cpp (construction, ticks, Ready/advance), election.cpp (roles, votes, pre-vote,
// check-quorum), replication.cpp (appends, flow control, commit, snapshots), reads.cpp
// (ReadIndex and leases) and membership.cpp (conf changes, leadership transfer).
//
// Thread safety: one thread at a time (owned by one Node).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <elfin/raft/conf_change.hpp>
#include <elfin/raft/config.hpp>
#include <elfin/raft/message.hpp>
#include <elfin/raft/propose_result.hpp>
#include <elfin/raft/ready.hpp>
#include <elfin/raft/recovered.hpp>

#include "log.hpp"
#include "progress.hpp"
#include "read_only.hpp"

namespace elfin::raft::internal {

class Core {
 public:
  Core(Config config, Recovered recovered, std::function<std::optional<Snapshot>()> snapshot_source);

  void tick();
  void step(Message&& m);
  void campaign_now();
  ProposeResult propose(Bytes data);
  ProposeResult propose_conf_change(ConfChange change);
  void read_index(Bytes context);
  void transfer_leadership(NodeId to);
  void compact(Index index);
  void report_unreachable(NodeId node);
  void report_snapshot(NodeId node, bool ok);
  void report_node_down(NodeId node);
  void report_node_up(NodeId node);
  void wake() { wake_up(); }
  [[nodiscard]] bool quiesced() const noexcept { return quiesced_; }
  [[nodiscard]] bool has_ready() const;
  Ready ready();
  void advance(std::uint64_t ready_id);

  [[nodiscard]] NodeId id() const noexcept { return config_.id; }
  [[nodiscard]] Role role() const noexcept { return role_; }
  [[nodiscard]] NodeId leader() const noexcept { return leader_; }
  [[nodiscard]] Term term() const noexcept { return term_; }
  [[nodiscard]] NodeId vote() const noexcept { return vote_; }
  [[nodiscard]] Index commit() const noexcept { return commit_; }
  [[nodiscard]] Index applied() const noexcept { return applied_; }
  [[nodiscard]] const RaftLog& log() const noexcept { return log_; }
  [[nodiscard]] const ConfState& conf() const noexcept { return conf_; }
  [[nodiscard]] NodeId transferee() const noexcept { return transferee_; }
  /// A tracked peer's match index (the leader's view), if tracked.
  [[nodiscard]] std::optional<Index> match_of(NodeId id) const {
    auto it = progress_.find(id);
    if (it == progress_.end()) return std::nullopt;
    return it->second.match;
  }

 private:
  // A Ready handed out and not yet advanced: what becomes durable with it.
  struct ReadyRecord {
    std::uint64_t id = 0;
    Index last_entry = 0;  // clamped when the log is truncated below it
    std::optional<HardState> hard_state;
    Index snapshot_index = 0;
  };

  // core.cpp
  void send(Message&& m);
  void reset_election_timeout();
  [[nodiscard]] bool promotable() const noexcept { return conf_.is_voter(config_.id); }
  void on_truncated(Index index);
  void commit_to(Index index);
  [[nodiscard]] bool committed_in_term() const noexcept;

  // election.cpp
  void tick_election();
  void tick_leader();
  void become_follower(Term term, NodeId leader);
  void become_pre_candidate();
  void become_candidate();
  void become_leader();
  void campaign(bool pre_vote, bool transfer);
  void handle_vote_request(const Message& m);
  void handle_vote_response(const Message& m);
  void count_self_vote();
  [[nodiscard]] bool has_unapplied_conf_change() const;
  [[nodiscard]] bool quorum_active();
  [[nodiscard]] bool in_lease() const noexcept;

  // replication.cpp
  void step_leader(Message&& m);
  void step_follower(Message&& m);
  void handle_append(Message&& m);
  void handle_heartbeat(const Message& m);
  void handle_snapshot(Message&& m);
  void handle_append_response(const Message& m);
  void handle_heartbeat_response(const Message& m);
  bool send_append(NodeId to, Progress& pr, bool allow_empty);
  bool send_snapshot(NodeId to, Progress& pr);
  void fill_window(NodeId to, Progress& pr);
  void bcast_append(bool allow_empty);
  void bcast_heartbeat(const Bytes& context, bool quiesce = false, bool periodic = false);
  bool maybe_commit();
  void on_leader_commit(Index previous);
  [[nodiscard]] Progress* progress(NodeId id);

  // reads.cpp
  void leader_read(Bytes context, NodeId from);
  void answer_read(Index index, Bytes context, NodeId from);
  void reject_reads();
  void release_waiting_reads();
  [[nodiscard]] bool lease_valid() const;
  void handle_read_index(const Message& m);
  void handle_read_index_response(const Message& m);

  // quiescence.cpp
  /// `heartbeat`: a leader that wakes heartbeats its followers awake; false when what woke it
  /// (a proposal) sends every follower an Append anyway, which wakes them as well.
  void note_activity(bool heartbeat = true);
  void wake_up(bool heartbeat = true);
  [[nodiscard]] bool can_quiesce() const;
  void maybe_quiesce();
  /// A follower asked to quiesce by its leader: whether it did (it answers either way).
  bool accept_quiesce(const Message& m);
  [[nodiscard]] bool is_down(NodeId id) const { return down_.contains(id); }
  [[nodiscard]] static bool is_quiesce_handshake(const Message& m) noexcept {
    return m.quiesce && (m.type == MessageType::Heartbeat || m.type == MessageType::HeartbeatResponse);
  }

  // membership.cpp
  void apply_conf_entry(const Entry& entry);
  void sync_progress();
  void send_timeout_now(NodeId to);
  void abort_transfer();

  Config config_;
  std::function<std::optional<Snapshot>()> snapshot_source_;
  std::uint64_t rng_;

  Term term_ = 0;
  NodeId vote_ = 0;
  NodeId leader_ = 0;
  Role role_ = Role::Follower;
  Index commit_ = 0;
  Index applied_ = 0;  // the last entry handed out in Ready::committed
  RaftLog log_;
  ConfState conf_;

  std::map<NodeId, Progress> progress_;  // leader: every member but itself
  std::map<NodeId, bool> votes_;         // (pre-)candidate
  std::uint64_t ticks_ = 1;              // this replica's tick count (lease stamps)
  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  int randomized_election_timeout_ = 0;
  bool lease_guard_ = false;  // Lease mode: refuse votes for the first timeout
  NodeId transferee_ = 0;
  int transfer_elapsed_ = 0;
  bool timeout_now_sent_ = false;
  bool lease_revoked_ = false;  // a transfer's forced election ignores stickiness
  Index pending_conf_index_ = 0;
  // Appends are built when the ready is, so that proposals and commit advances between two
  // readies share one Append per follower. 0: none, 1: new entries, 2: also the commit index.
  int deferred_append_ = 0;
  std::uint64_t uncommitted_bytes_ = 0;
  ReadOnly read_only_;
  bool quiesced_ = false;
  int idle_ticks_ = 0;                // leader: ticks since the last activity
  std::uint64_t activity_stamp_ = 0;  // leader: ticks_ at the last activity (older acks are stale)
  std::set<NodeId> down_;             // nodes reported down and not heard from since

  // Output, handed out by ready().
  std::vector<Message> messages_;
  std::vector<Message> messages_after_persist_;
  std::vector<ReadState> reads_;
  std::optional<Snapshot> received_snapshot_;
  HardState emitted_hard_state_;
  HardState durable_hard_state_;
  Role emitted_role_ = Role::Follower;
  NodeId emitted_leader_ = 0;
  Term emitted_term_ = 0;
  std::uint64_t next_ready_id_ = 1;
  std::deque<ReadyRecord> records_;
};

}  // namespace elfin::raft::internal
