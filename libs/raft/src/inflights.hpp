// The Append messages a leader has in flight to one follower, as a ring of (last index, bytes):
// a full ring pauses sending (the pipelining window), an acknowledgement frees every message up
// to the acknowledged index. The ring is allocated once per follower, not per message.
//
// Thread safety: owned by one Progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <elfin/raft/entry.hpp>

namespace elfin::raft::internal {

class Inflights {
 public:
  explicit Inflights(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  [[nodiscard]] bool full() const noexcept { return count_ == capacity_; }
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  /// Records an Append whose last entry is `last` (indexes grow from one add to the next).
  void add(Index last, std::uint64_t bytes);
  /// Frees every message whose last entry is <= `index`.
  void free_le(Index index) noexcept;
  /// Frees the oldest message (a heartbeat response proves the follower is alive while the
  /// window may be full of lost messages).
  void free_first_one() noexcept;
  void reset() noexcept;

 private:
  struct Slot {
    Index last = 0;
    std::uint64_t bytes = 0;
  };
  std::size_t capacity_;
  std::vector<Slot> ring_;  // grows to capacity_ once, then reused
  std::size_t start_ = 0;
  std::size_t count_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace elfin::raft::internal
