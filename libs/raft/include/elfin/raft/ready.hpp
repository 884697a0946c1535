// A batch of work the application does for a Node: persist, send, apply. The application loop is
//
//     while (node.has_ready()) {
//       Ready ready = node.ready();
//       send(ready.messages);                          // now, even before the write below
//       write(ready.hard_state, ready.snapshot, ready.entries);   // may be asynchronous
//       ... once durable: node.advance(ready.id); send(ready.messages_after_persist);
//       apply(ready.snapshot, ready.committed); serve(ready.reads);
//     }
//
// Durable before counted: a replica acknowledges entries, grants votes and answers heartbeats
// only through messages_after_persist, and a leader counts its own copy of an entry toward the
// commit quorum only after advance() of the ready that carried it. Ready::committed holds only
// entries that are durable on this replica, so an acknowledged write survives any crash of a
// minority, this replica included. Several readies may be outstanding; they are written and
// advanced in id order (advance(id) acknowledges every ready up to id).
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <elfin/raft/entry.hpp>
#include <elfin/raft/hard_state.hpp>
#include <elfin/raft/message.hpp>
#include <elfin/raft/read_state.hpp>
#include <elfin/raft/role.hpp>
#include <elfin/raft/snapshot.hpp>

namespace elfin::raft {

struct Ready {
  std::uint64_t id = 0;  ///< acknowledged with Node::advance(id), in order
  /// Persist when set. Term and vote must be durable before messages_after_persist go out.
  std::optional<HardState> hard_state;
  /// A snapshot received from the leader: persist it (it replaces the whole log: discard every
  /// stored entry) and restore the state machine from it before applying `committed`.
  std::optional<Snapshot> snapshot;
  /// Append to the durable log; an index at or below the last stored one replaces it and every
  /// entry after it (the WAL rule).
  std::vector<Entry> entries;
  /// May be sent at once (a leader's Append, Heartbeat, InstallSnapshot; pre-votes; reads).
  std::vector<Message> messages;
  /// Send only once this ready's hard state, snapshot and entries are durable (votes, append and
  /// heartbeat responses).
  std::vector<Message> messages_after_persist;
  /// Apply in order; skip empty Normal entries (no-ops). ConfChange entries already took effect
  /// in the Node when handed out here; the application applies them to its own bookkeeping.
  std::vector<Entry> committed;
  std::vector<ReadState> reads;
  // Soft state, always filled.
  Role role = Role::Follower;
  NodeId leader = 0;
  Term term = 0;

  /// Whether the write must be synced before advance(): entries, a snapshot, or a new term/vote.
  /// A commit-only hard state change need not be.
  bool must_sync = false;
};

}  // namespace elfin::raft
