#include "wire.hpp"

#include <utility>

namespace elfin::actors::partition::internal {

namespace pr = protocols::raft;
namespace rf = elfin::raft;

namespace {

// The wire enum lists the library's message types in its order, then Unknown (what a newer peer
// may send), so the conversion is a cast. The wire itself carries names (ELFIN_ENUM).
static_assert(static_cast<int>(pr::MessageType::PreVote) == static_cast<int>(rf::MessageType::PreVote) &&
              static_cast<int>(pr::MessageType::ReadIndexResponse) ==
                  static_cast<int>(rf::MessageType::ReadIndexResponse) &&
              static_cast<int>(pr::MessageType::Unknown) == static_cast<int>(rf::MessageType::ReadIndexResponse) + 1);

pr::MessageType wire_type(rf::MessageType type) { return static_cast<pr::MessageType>(type); }

std::optional<rf::MessageType> lib_type(pr::MessageType type) {
  if (type >= pr::MessageType::Unknown) return std::nullopt;  // and the partition actors' own kinds after it
  return static_cast<rf::MessageType>(type);
}

pr::Entry to_wire(const rf::Entry& e) {
  return pr::Entry{e.term, e.index,
                   e.kind == rf::EntryKind::ConfChange ? pr::EntryKind::ConfChange : pr::EntryKind::Normal, e.data};
}

std::optional<rf::Entry> from_wire(const pr::Entry& e) {
  if (e.kind == pr::EntryKind::Unknown) return std::nullopt;
  return rf::Entry{e.term, e.index,
                   e.kind == pr::EntryKind::ConfChange ? rf::EntryKind::ConfChange : rf::EntryKind::Normal, e.data};
}

}  // namespace

pr::Beat to_beat(pr::PartitionId partition, const rf::Message& m) {
  return pr::Beat{partition, wire_type(m.type), m.term, m.index, m.commit, m.context, m.quiesce};
}

pr::RaftMessage from_beat(const pr::Beat& beat, pr::NodeId from, pr::NodeId to) {
  pr::RaftMessage out;
  out.partition = beat.partition;
  out.type = beat.type;
  out.from = from;
  out.to = to;
  out.term = beat.term;
  out.index = beat.index;
  out.commit = beat.commit;
  out.context = beat.context;
  out.quiesce = beat.quiesce;
  out.periodic = true;
  return out;
}

pr::ConfState to_wire(const rf::ConfState& conf) {
  return pr::ConfState{conf.voters, conf.learners, conf.voters_outgoing};
}

rf::ConfState from_wire(const pr::ConfState& conf) {
  rf::ConfState out;
  out.voters = conf.voters;
  out.learners = conf.learners;
  out.voters_outgoing = conf.voters_outgoing;
  return out;
}

pr::Snapshot to_wire(const rf::Snapshot& s) {
  return pr::Snapshot{s.meta.index, s.meta.term, to_wire(s.meta.conf), s.data};
}

rf::Snapshot from_wire(const pr::Snapshot& s) {
  rf::Snapshot out;
  out.meta.index = s.index;
  out.meta.term = s.term;
  out.meta.conf = from_wire(s.conf);
  out.data = s.data;
  return out;
}

pr::RaftMessage to_wire(pr::PartitionId partition, const rf::Message& m) {
  pr::RaftMessage out;
  out.partition = partition;
  out.type = wire_type(m.type);
  out.from = m.from;
  out.to = m.to;
  out.term = m.term;
  out.log_term = m.log_term;
  out.index = m.index;
  out.entries.reserve(m.entries.size());
  for (const auto& e : m.entries) out.entries.push_back(to_wire(e));
  out.commit = m.commit;
  out.reject = m.reject;
  out.reject_hint = m.reject_hint;
  if (m.snapshot) out.snapshot = to_wire(*m.snapshot);
  out.context = m.context;
  out.quiesce = m.quiesce;
  out.periodic = m.periodic;
  return out;
}

std::optional<rf::Message> from_wire(const pr::RaftMessage& m) {
  const auto type = lib_type(m.type);
  if (!type) return std::nullopt;
  rf::Message out;
  out.type = *type;
  out.from = m.from;
  out.to = m.to;
  out.term = m.term;
  out.log_term = m.log_term;
  out.index = m.index;
  out.entries.reserve(m.entries.size());
  for (const auto& e : m.entries) {
    auto entry = from_wire(e);
    if (!entry) return std::nullopt;
    out.entries.push_back(std::move(*entry));
  }
  out.commit = m.commit;
  out.reject = m.reject;
  out.reject_hint = m.reject_hint;
  if (m.snapshot) out.snapshot = from_wire(*m.snapshot);
  out.context = m.context;
  out.quiesce = m.quiesce;
  out.periodic = m.periodic;
  return out;
}

protocols::wal::Entry to_wal(const rf::Entry& entry) {
  protocols::wal::Entry out;
  out.term = entry.term;
  out.index = entry.index;
  out.payload.reserve(entry.data.size() + 1);
  out.payload.push_back(static_cast<std::uint8_t>(entry.kind));
  out.payload.insert(out.payload.end(), entry.data.begin(), entry.data.end());
  return out;
}

std::optional<rf::Entry> from_wal(const protocols::wal::Entry& entry) {
  if (entry.payload.empty() || entry.payload[0] > static_cast<std::uint8_t>(rf::EntryKind::ConfChange)) {
    return std::nullopt;
  }
  rf::Entry out;
  out.term = entry.term;
  out.index = entry.index;
  out.kind = static_cast<rf::EntryKind>(entry.payload[0]);
  out.data.assign(entry.payload.begin() + 1, entry.payload.end());
  return out;
}

}  // namespace elfin::actors::partition::internal
