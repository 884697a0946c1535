// A partition's hard state as a WAL record: the Raft term, the vote cast in it and the commit
// index, which must be durable before any message of a new term goes out (the Raft storage
// contract). It is written as a `record_type::kHardState` record of its partition, ordered with
// the partition's entries in the same file, and recovery returns the latest one per partition.
//
// Payload: term u64 | vote u64 | commit u64, little-endian (24 bytes). Longer payloads are
// accepted (fields added later); shorter ones are damage.
//
// Thread safety: pure functions over bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace elfin::wal {

struct HardState {
  std::uint64_t term = 0;
  std::uint64_t vote = 0;    ///< the node voted for in `term` (0: none)
  std::uint64_t commit = 0;  ///< the commit index known when it was saved
  friend bool operator==(const HardState&, const HardState&) = default;
};

inline constexpr std::size_t kHardStateBytes = 24;

/// The record payload of `state`.
[[nodiscard]] std::array<std::byte, kHardStateBytes> encode_hard_state(const HardState& state) noexcept;
/// Reads a hard-state payload; nullopt when it is shorter than kHardStateBytes.
[[nodiscard]] std::optional<HardState> decode_hard_state(std::span<const std::byte> payload) noexcept;

}  // namespace elfin::wal
