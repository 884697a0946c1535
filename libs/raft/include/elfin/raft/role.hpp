// A replica's role in its group. PreCandidate is the pre-vote phase: it asks whether it could win
// before raising its term, so a node that was cut off does not disrupt a healthy leader on return.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string_view>

namespace elfin::raft {

enum class Role : std::uint8_t { Follower, PreCandidate, Candidate, Leader };

[[nodiscard]] std::string_view to_string(Role role) noexcept;

}  // namespace elfin::raft
