// The partition group's config: which nodes hold the replicas, Raft's timing, and where
// snapshots go. One section for the group; every partition on the node uses it.
//
//   [partitions]
//   placement = "nodes"          # "nodes": every partition on every node of `nodes`;
//                                # "assignment": each partition only on the nodes the shard
//                                # manager's assignment names (a raft.Placement table, see below)
//   nodes = [1, 2, 3]            # placement "nodes" (required there): the node numbers holding a
//                                # replica of every partition (Raft node id = node number)
//   reconcile_ticks = 10         # placement "assignment": a leader compares its membership with
//                                # the table every this many ticks and takes one step toward it
//   tick = "100ms"               # one Raft tick
//   election_ticks = 10          # a follower campaigns after [e, 2e) ticks without a leader
//   heartbeat_ticks = 1          # a leader heartbeats every this many ticks
//   coalesce_heartbeats = true   # the timed heartbeats (and answers) of all partitions between
//                                # two nodes travel together, one message per tick each way,
//                                # with the node's liveness ping; false: one message each
//   quiesce_after_ticks = 10     # an idle partition sleeps after this many ticks without a
//                                # proposal or read, once every replica holds its whole log: no
//                                # ticks, no heartbeats until a request or a Raft message wakes it
//                                # (0: never; see "Idle partitions" in the guide's Replication part)
//   snapshot_dir = "/var/lib/elfin/snapshots"  # required; a directory per partition inside
//   snapshot_every = 10000       # a snapshot (and a WAL checkpoint) after this many applied entries
//   proposal_timeout = "5s"      # a proposal, read or transfer unanswered this long: Timeout
//   pre_vote = true              # Raft's pre-vote (a rejoining node does not disrupt the leader)
//   check_quorum = true          # a leader that hears from no majority steps down
//   max_inflight = 256           # Append messages in flight per follower
//   max_append_bytes = "1MiB"    # entries per Append message
//   recovery_read_bytes = "4MiB" # entries per WAL read while a partition recovers
//
// Routes come from the topology: the group sends `wal` requests (route protocol "wal" to the WAL
// group) and `raft.RaftMessage` (route it to a remote group fronting the same partition group
// on the peer nodes, whose node selector is `peer_node`; see elfin/actors/partition.hpp).
// A reload applies the timing and limits to new partition actors; running ones keep theirs.
//
// Placement "assignment" (elfin/actors/partition/placement.hpp says how): the group takes a
// `raft.Placement` table (route it to the group; the KV front sends one per assignment). Raft
// node id = node number, as with `nodes`. A partition is created (bootstrapped) once, by its
// owner (the first node of its list), with the list as voters, and only after every node of the
// table (`nodes`) said it holds nothing of it; other replicas start blank and are filled by the
// leader (a snapshot carries the membership). A node not in the
// list keeps nothing on disk and answers NotLeader with the owner as hint. The leader moves the
// membership toward the list: add a learner, promote it once caught up, hand leadership over
// if it is leaving, remove the leaving replicas.
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/config.hpp>
#include <elfin/duration.hpp>

namespace elfin::actors::partition {

struct Config {
  std::string placement = "nodes";
  std::vector<std::uint64_t> nodes;
  std::uint32_t reconcile_ticks = 10;
  std::chrono::milliseconds tick{100};
  std::uint32_t election_ticks = 10;
  std::uint32_t heartbeat_ticks = 1;
  bool coalesce_heartbeats = true;
  std::uint32_t quiesce_after_ticks = 10;
  std::string snapshot_dir;
  std::uint64_t snapshot_every = 10000;
  std::chrono::milliseconds proposal_timeout{5000};
  bool pre_vote = true;
  bool check_quorum = true;
  std::uint64_t max_inflight = 256;
  ByteSize max_append_bytes{1u << 20};
  ByteSize recovery_read_bytes{4u << 20};

  [[nodiscard]] bool from_assignment() const { return placement == "assignment"; }
  ELFIN_CONFIG(placement, nodes, reconcile_ticks, tick, election_ticks, heartbeat_ticks, snapshot_dir, snapshot_every,
               proposal_timeout, pre_vote, check_quorum, max_inflight, max_append_bytes, recovery_read_bytes,
               quiesce_after_ticks, coalesce_heartbeats);
};

/// What is wrong with `config`, one line per problem naming the key (and, when `section` knows
/// where the key was written, the file and line); empty when it is valid. The group answers
/// ValidateConfig with these, so a start or a reload with a bad value is refused.
[[nodiscard]] std::vector<std::string> validate(const Config& config, const AnyConfig& section = {});

}  // namespace elfin::actors::partition
