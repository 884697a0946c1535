// A single-server membership change and its encoding in a ConfChange entry's data.
//
// Supported: AddVoter (also promotes a learner), AddLearner (also demotes a voter), RemoveNode, one
// at a time; a leader accepts a new change only once the previous one is applied and an entry of
// its own term is committed (the fix for the single-server-change bug). Joint consensus (an
// atomic replace) is not supported: replace = add learner, promote, then remove.
//
// A change takes effect on every replica when its entry is committed and handed out in
// Ready::committed. The leader writes the resulting ConfState next to the change, so a replica
// that joined later learns the whole membership from the entry, not only the delta.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <elfin/raft/conf_state.hpp>
#include <elfin/raft/entry.hpp>

namespace elfin::raft {

enum class ConfChangeKind : std::uint8_t { AddVoter, AddLearner, RemoveNode };

struct ConfChange {
  ConfChangeKind kind = ConfChangeKind::AddVoter;
  NodeId node = 0;

  friend bool operator==(const ConfChange&, const ConfChange&) = default;
};

[[nodiscard]] std::string_view to_string(ConfChangeKind kind) noexcept;

/// Encodes a change alone (the result is computed by each replica when it applies the entry).
[[nodiscard]] Bytes encode_conf_change(const ConfChange& change);
/// Encodes a change with the configuration it results in (what the leader writes).
[[nodiscard]] Bytes encode_conf_change(const ConfChange& change, const ConfState& resulting);
/// The change in a ConfChange entry's data; nullopt when the bytes are not one.
[[nodiscard]] std::optional<ConfChange> decode_conf_change(std::span<const std::uint8_t> data);
/// The resulting configuration, when the entry carries one.
[[nodiscard]] std::optional<ConfState> decode_conf_result(std::span<const std::uint8_t> data);
/// `conf` with `change` applied (learners promoted, voters demoted, removed ones gone).
[[nodiscard]] ConfState apply_conf_change(ConfState conf, const ConfChange& change);

}  // namespace elfin::raft
