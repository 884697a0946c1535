#include "inflights.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace elfin::raft::internal {

void Inflights::add(Index last, std::uint64_t bytes) {
  assert(!full());
  if (count_ == ring_.size()) {
    // Grow lazily up to the capacity, keeping the live slots in order from the front: a
    // follower that never pipelines costs nothing.
    std::vector<Slot> grown(std::min(capacity_, std::max<std::size_t>(ring_.size() * 2, 8)));
    for (std::size_t k = 0; k < count_; ++k) {
      grown[k] = ring_[(start_ + k) % ring_.size()];
    }
    ring_ = std::move(grown);
    start_ = 0;
  }
  ring_[(start_ + count_) % ring_.size()] = Slot{last, bytes};
  ++count_;
  bytes_ += bytes;
}

void Inflights::free_le(Index index) noexcept {
  while (count_ > 0 && ring_[start_].last <= index) {
    free_first_one();
  }
}

void Inflights::free_first_one() noexcept {
  if (count_ == 0) {
    return;
  }
  bytes_ -= ring_[start_].bytes;
  start_ = (start_ + 1) % ring_.size();
  --count_;
  if (count_ == 0) {
    start_ = 0;
  }
}

void Inflights::reset() noexcept {
  start_ = 0;
  count_ = 0;
  bytes_ = 0;
}

}  // namespace elfin::raft::internal
