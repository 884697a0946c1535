#include "progress.hpp"

#include <algorithm>

namespace elfin::raft::internal {

void Progress::become_probe() noexcept {
  // After a snapshot the follower holds at least the snapshot: probe right after it.
  if (state == ProgressState::Snapshot) {
    next = std::max(match + 1, pending_snapshot + 1);
  } else {
    next = match + 1;
  }
  state = ProgressState::Probe;
  probe_sent = false;
  pending_snapshot = 0;
  snapshot_elapsed = 0;
  inflights.reset();
}

void Progress::become_replicate() noexcept {
  state = ProgressState::Replicate;
  next = match + 1;
  probe_sent = false;
  pending_snapshot = 0;
  snapshot_elapsed = 0;
  inflights.reset();
}

void Progress::become_snapshot(Index snapshot_index) noexcept {
  state = ProgressState::Snapshot;
  pending_snapshot = snapshot_index;
  snapshot_elapsed = 0;
  probe_sent = false;
  inflights.reset();
}

bool Progress::maybe_update(Index index) noexcept {
  bool updated = false;
  if (index > match) {
    match = index;
    updated = true;
    probe_sent = false;
  }
  next = std::max(next, index + 1);
  return updated;
}

bool Progress::maybe_decrease(Index rejected, Index hint_next) noexcept {
  if (state == ProgressState::Replicate) {
    // Appends are pipelined: only a rejection above what is known to match is news.
    if (rejected <= match) {
      return false;
    }
  } else if (rejected != next - 1) {
    return false;  // the answer to an older probe
  }
  next = std::max(std::min(rejected, hint_next), match + 1);
  probe_sent = false;
  return true;
}

bool Progress::paused() const noexcept {
  switch (state) {
    case ProgressState::Probe:
      return probe_sent;
    case ProgressState::Replicate:
      return inflights.full();
    case ProgressState::Snapshot:
      return true;
  }
  return true;
}

}  // namespace elfin::raft::internal
