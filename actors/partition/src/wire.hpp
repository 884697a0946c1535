// Conversions between libs/raft's values and protocols/raft's wire structs, and the WAL payload
// of a Raft entry. Kept here, not in the protocol: protocols depend on the core only.
//
// A Raft entry in the WAL: the WAL entry's term and index are the Raft entry's; its payload is
// one byte of entry kind followed by the entry's data.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include <elfin/protocols/raft.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/raft/entry.hpp>
#include <elfin/raft/message.hpp>
#include <elfin/raft/snapshot.hpp>

namespace elfin::actors::partition::internal {

[[nodiscard]] protocols::raft::RaftMessage to_wire(protocols::raft::PartitionId partition,
                                                   const elfin::raft::Message& m);
/// nullopt for a message type or entry kind this build does not know (the message is dropped).
[[nodiscard]] std::optional<elfin::raft::Message> from_wire(const protocols::raft::RaftMessage& m);

/// A timed heartbeat (or its answer) as it travels in a batch, and back (`from`, `to`: the
/// batch's nodes).
[[nodiscard]] protocols::raft::Beat to_beat(protocols::raft::PartitionId partition, const elfin::raft::Message& m);
[[nodiscard]] protocols::raft::RaftMessage from_beat(const protocols::raft::Beat& beat, protocols::raft::NodeId from,
                                                     protocols::raft::NodeId to);

[[nodiscard]] protocols::raft::ConfState to_wire(const elfin::raft::ConfState& conf);
[[nodiscard]] elfin::raft::ConfState from_wire(const protocols::raft::ConfState& conf);
[[nodiscard]] protocols::raft::Snapshot to_wire(const elfin::raft::Snapshot& snapshot);
[[nodiscard]] elfin::raft::Snapshot from_wire(const protocols::raft::Snapshot& snapshot);

[[nodiscard]] protocols::wal::Entry to_wal(const elfin::raft::Entry& entry);
/// nullopt for an empty payload or an unknown kind (damage: the WAL checked the CRC, so a bug).
[[nodiscard]] std::optional<elfin::raft::Entry> from_wal(const protocols::wal::Entry& entry);

}  // namespace elfin::actors::partition::internal
