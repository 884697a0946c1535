// The partition actors' protocol: Raft messages between the replicas of a partition on different
// nodes, and what clients ask of a partition. Every message names its `partition`; the partition
// group's router keys by it, so the first message for a partition creates its actor on that node.
//
//   RaftMessage         one replica to another (the wire form of elfin::raft::Message); sent to
//                       the node numbered `to`, never answered
//   Propose             a command for the partition's state machine -> Proposed (its response,
//                       once the command is committed and applied on the leader)
//   Read                a query -> ReadResult, linearizable (ReadIndex) unless `stale`
//   GetPartitionStatus  where this replica stands (role, term, leader, commit, applied)
//   AddReplica / RemoveReplica / TransferLeader   membership and leadership changes
//   Placement           where every partition's replicas should be (from the shard manager's
//                       assignment); a partition group placed by it hosts, bootstraps and moves
//                       its partitions by this table, see elfin/actors/partition/config.hpp
//
// Requests are answered `elfin::Result<T, RaftError>`. A replica that is not the leader answers
// NotLeader with its best guess of the leader's node (0: unknown): the caller retries there. A
// proposal may be lost when leadership changes before it commits: it is answered Dropped (the
// term moved on) or Timeout (no answer within the partition's `proposal_timeout`); either way it
// may or may not have been applied, so commands that must apply once carry their own ids.
//
// Every struct is a msgpack map with named fields, so replicas of different versions understand
// each other (fields added later are ELFIN_DEFAULT; enums travel by name).
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/evolution.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::raft {

using PartitionId = std::uint64_t;
/// A replica's node: the node number of the elfin node holding it (0: none).
using NodeId = std::uint64_t;
using Term = std::uint64_t;
using Index = std::uint64_t;
/// Commands, responses, queries and snapshots, as the state machine reads and writes them.
using Bytes = std::vector<std::uint8_t>;

// --- Raft messages ---------------------------------------------------------------------------

/// What a RaftMessage is (elfin::raft::MessageType); a name this build does not know decodes to
/// Unknown, and such a message is dropped (Raft tolerates lost messages).
enum class MessageType : std::uint8_t {
  PreVote,
  PreVoteResponse,
  Vote,
  VoteResponse,
  Append,
  AppendResponse,
  Heartbeat,
  HeartbeatResponse,
  InstallSnapshot,
  TimeoutNow,
  ReadIndex,
  ReadIndexResponse,
  Unknown,
  /// Not Raft's: a member telling node `to`, which is not in the membership it applied up to
  /// `index`, that it was removed (while it was down, or before it could learn it).
  NotMember,
  /// Not Raft's: a new partition's owner asking node `to` whether it may create the partition
  /// (placement "assignment"), and the answer (`reject`: it holds or held a replica, or creates
  /// the partition itself).
  CreateQuery,
  CreateAnswer,
};
ELFIN_ENUM(MessageType, PreVote, PreVoteResponse, Vote, VoteResponse, Append, AppendResponse, Heartbeat,
           HeartbeatResponse, InstallSnapshot, TimeoutNow, ReadIndex, ReadIndexResponse, NotMember, CreateQuery,
           CreateAnswer, ELFIN_OTHER(Unknown));

enum class EntryKind : std::uint8_t { Normal, ConfChange, Unknown };
ELFIN_ENUM(EntryKind, Normal, ConfChange, ELFIN_OTHER(Unknown));

/// One entry of a partition's Raft log. An empty Normal entry is a new leader's no-op.
struct Entry {
  Term term = 0;
  Index index = 0;
  EntryKind kind = EntryKind::Normal;
  Bytes data;
  ELFIN_PART(term, index, kind, data);
  friend bool operator==(const Entry&, const Entry&) = default;
};

/// The replicas of a partition: voters, learners, and the outgoing voters of a joint configuration.
struct ConfState {
  std::vector<NodeId> voters;
  std::vector<NodeId> learners;
  std::vector<NodeId> voters_outgoing;
  ELFIN_PART(voters, ELFIN_DEFAULT(learners), ELFIN_DEFAULT(voters_outgoing));
  friend bool operator==(const ConfState&, const ConfState&) = default;
};

/// A state machine snapshot up to `index` (whose entry has `term`), with the configuration then.
struct Snapshot {
  Index index = 0;
  Term term = 0;
  ConfState conf;
  Bytes data;
  ELFIN_PART(index, term, conf, data);
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

/// A timed heartbeat of one partition's leader, or a follower's answer to one, travelling in a
/// batch between two nodes (RaftMessage::beats): the fields of the RaftMessage it stands for.
struct Beat {
  PartitionId partition = 0;
  MessageType type = MessageType::Unknown;  ///< Heartbeat or HeartbeatResponse
  Term term = 0;
  Index index = 0;
  Index commit = 0;
  Bytes context;
  bool quiesce = false;
  ELFIN_PART(partition, type, term, index, ELFIN_DEFAULT(commit), ELFIN_DEFAULT(context), ELFIN_DEFAULT(quiesce));
  friend bool operator==(const Beat&, const Beat&) = default;
};

/// One Raft message from replica `from` to replica `to` of `partition`. The partition actors send
/// it through a remote group whose node selector picks node `to`; the receiving node routes it
/// to its own actor for the partition (created if needed). The node's liveness ping (a Heartbeat of
/// a reserved partition, see the partition actors) carries the timed heartbeats of every partition
/// between the two nodes in `beats`; the receiver hands each to its partition as a RaftMessage of
/// its own with `periodic` set.
struct RaftMessage {
  PartitionId partition = 0;
  MessageType type = MessageType::Unknown;
  NodeId from = 0;
  NodeId to = 0;
  Term term = 0;
  Term log_term = 0;  ///< Append: the previous entry's term; Vote: the candidate's last term
  Index index = 0;    ///< Append: the previous entry's index; Vote: last index; responses: match/hint
  std::vector<Entry> entries;
  Index commit = 0;
  bool reject = false;
  Index reject_hint = 0;
  std::optional<Snapshot> snapshot;  ///< InstallSnapshot
  Bytes context;                     ///< ReadIndex and heartbeat read context
  bool quiesce = false;              ///< Heartbeat: quiesce; HeartbeatResponse: quiesced
  bool periodic = false;             ///< Heartbeat(Response): a timed one (may travel in `beats`)
  std::vector<Beat> beats;           ///< the liveness ping: other partitions' timed heartbeats
  ELFIN_MESSAGE(raft, RaftMessage, partition, type, from, to, term, log_term, index, ELFIN_DEFAULT(entries),
                ELFIN_DEFAULT(commit), ELFIN_DEFAULT(reject), ELFIN_DEFAULT(reject_hint), snapshot,
                ELFIN_DEFAULT(context), ELFIN_DEFAULT(quiesce), ELFIN_DEFAULT(periodic), ELFIN_DEFAULT(beats));
};

// --- errors ----------------------------------------------------------------------------------

/// Why a request to a partition was not served; what the caller does about it.
enum class RaftErrorKind : std::uint8_t {
  NotLeader,     ///< this replica is not the leader: retry at `leader_hint` (0: unknown, retry later)
  Dropped,       ///< the proposal was lost (leadership changed, a transfer in progress, too much
                 ///< uncommitted): it may or may not be applied; retry with the same command id
  Timeout,       ///< no answer within `proposal_timeout`: as Dropped, the outcome is unknown
  ShuttingDown,  ///< the partition actor is terminating
  Unavailable,   ///< the replica cannot serve now (recovering, its WAL failed); `detail` says why
  BadRequest,    ///< a request this replica cannot act on (a membership change that makes no sense)
  Other,         ///< a kind this build does not know (from a newer peer); `detail` says what
};
ELFIN_ENUM(RaftErrorKind, NotLeader, Dropped, Timeout, ShuttingDown, Unavailable, BadRequest, ELFIN_OTHER(Other));

struct RaftError {
  RaftErrorKind kind = RaftErrorKind::Unavailable;
  PartitionId partition = 0;
  NodeId leader_hint = 0;  ///< NotLeader: the node believed to lead the partition (0: unknown)
  std::string detail;      ///< for people
  ELFIN_PART(kind, partition, leader_hint, detail);
  friend bool operator==(const RaftError&, const RaftError&) = default;
};

// --- client requests -------------------------------------------------------------------------

/// A proposal applied: the entry it became and the state machine's response to it.
struct Proposed {
  PartitionId partition = 0;
  Index index = 0;
  Term term = 0;
  Bytes response;
  ELFIN_PART(partition, index, term, response);
};

/// Proposes `command` to the partition's state machine. Answered by the leader once the entry is
/// committed (durable on a majority) and applied there; followers answer NotLeader.
struct Propose {
  PartitionId partition = 0;
  Bytes command;
  ELFIN_REQUEST(raft, Propose, (elfin::Result<Proposed, RaftError>), partition, command);
};

struct ReadResult {
  PartitionId partition = 0;
  Index index = 0;  ///< the state machine had applied at least this index when it answered
  Bytes response;
  ELFIN_PART(partition, index, response);
};

/// Runs `query` against the state machine. Linearizable by default: the leader confirms it still
/// leads (ReadIndex, one heartbeat round) and answers once it applied up to the commit index it
/// had when the read arrived. `stale = true` answers at once from whatever replica receives it,
/// possibly behind the leader.
struct Read {
  PartitionId partition = 0;
  Bytes query;
  bool stale = false;
  ELFIN_REQUEST(raft, Read, (elfin::Result<ReadResult, RaftError>), partition, query, ELFIN_DEFAULT(stale));
};

enum class Role : std::uint8_t { Follower, PreCandidate, Candidate, Leader, Other };
ELFIN_ENUM(Role, Follower, PreCandidate, Candidate, Leader, ELFIN_OTHER(Other));

/// Where one replica of a partition stands.
struct PartitionStatus {
  PartitionId partition = 0;
  NodeId node = 0;  ///< this replica
  Role role = Role::Follower;
  Term term = 0;
  NodeId leader = 0;  ///< 0: unknown
  Index commit = 0;
  Index applied = 0;
  Index last_index = 0;
  Index snapshot_index = 0;  ///< of the latest snapshot file (0: none)
  ConfState conf;
  bool ready = false;       ///< recovery finished
  bool quiesced = false;    ///< idle: this replica takes no ticks and sends nothing until woken
  std::uint64_t ticks = 0;  ///< Raft ticks this replica's actor took since it started
  ELFIN_PART(partition, node, role, term, leader, commit, applied, last_index, snapshot_index, conf, ready,
             ELFIN_DEFAULT(quiesced), ELFIN_DEFAULT(ticks));
};

/// This replica's status (answered by any replica, recovering or not).
struct GetPartitionStatus {
  PartitionId partition = 0;
  ELFIN_REQUEST(raft, GetPartitionStatus, PartitionStatus, partition);
};

/// A membership change committed and applied on the leader: the configuration it led to.
struct MembershipChanged {
  PartitionId partition = 0;
  Index index = 0;
  ConfState conf;
  ELFIN_PART(partition, index, conf);
};

/// Adds `node` as a voter (or a learner: it receives the log but does not vote). Sent to the
/// leader; answered once the change is applied. The new node's partition actor is created by
/// the first Raft message it receives.
struct AddReplica {
  PartitionId partition = 0;
  NodeId node = 0;
  bool learner = false;
  ELFIN_REQUEST(raft, AddReplica, (elfin::Result<MembershipChanged, RaftError>), partition, node,
                ELFIN_DEFAULT(learner));
};

/// Removes `node` from the partition (voter or learner); answered once the change is applied.
struct RemoveReplica {
  PartitionId partition = 0;
  NodeId node = 0;
  ELFIN_REQUEST(raft, RemoveReplica, (elfin::Result<MembershipChanged, RaftError>), partition, node);
};

/// Leadership moved: `leader` leads in `term`.
struct LeaderTransferred {
  PartitionId partition = 0;
  NodeId leader = 0;
  Term term = 0;
  ELFIN_PART(partition, leader, term);
};

/// Asks the leader to hand leadership to `to` (brought up to date first). Answered once this
/// replica sees `to` lead, or Timeout after `proposal_timeout`.
struct TransferLeader {
  PartitionId partition = 0;
  NodeId to = 0;
  ELFIN_REQUEST(raft, TransferLeader, (elfin::Result<LeaderTransferred, RaftError>), partition, to);
};

/// Where each partition's replicas should be: per partition from `first_partition`, the node ids
/// of its replicas, the owner (the replica that bootstraps a new partition) first; an empty list
/// when the partition is placed nowhere. A newer `epoch` replaces an older table; an older one is
/// ignored. The KV front sends it to its node's partition group whenever the shard manager's
/// assignment changes.
struct Placement {
  std::uint64_t epoch = 0;
  PartitionId first_partition = 0;
  std::vector<std::vector<NodeId>> replicas;
  /// Every node in the map, holding replicas or not: a partition's owner creates it only once
  /// each of them said it holds nothing of it (empty: the nodes `replicas` names).
  std::vector<NodeId> nodes;
  ELFIN_MESSAGE(raft, Placement, epoch, first_partition, replicas, ELFIN_DEFAULT(nodes));

  /// The replicas of `partition`, the owner first (empty: none, or outside the table).
  [[nodiscard]] std::vector<NodeId> replicas_of(PartitionId partition) const {
    if (partition < first_partition || partition - first_partition >= replicas.size()) return {};
    return replicas[partition - first_partition];
  }
};

[[nodiscard]] std::string_view to_string(RaftErrorKind kind) noexcept;
/// "NotLeader (partition 3, leader 2): <detail>".
[[nodiscard]] std::string to_string(const RaftError& error);

}  // namespace elfin::protocols::raft

ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::RaftMessage);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::Propose);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::Read);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::GetPartitionStatus);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::AddReplica);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::RemoveReplica);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::TransferLeader);
ELFIN_EXTERN_MESSAGE(elfin::protocols::raft::Placement);

template <>
struct fmt::formatter<elfin::protocols::raft::RaftError> : fmt::formatter<std::string_view> {
  auto format(const elfin::protocols::raft::RaftError& error, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::protocols::raft::to_string(error), ctx);
  }
};
