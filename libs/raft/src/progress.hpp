// What a leader knows about one follower's log: `match` (the last entry known durable there) and
// `next` (the next entry to send), and how it sends:
//   Probe      one Append at a time until the follower's position is found (after a rejection,
//              on a new leader, after a snapshot); a heartbeat response allows the next probe.
//   Replicate  pipelining: `next` advances as Appends go out, up to max_inflight in flight.
//   Snapshot   an InstallSnapshot is on its way; nothing else is sent until it is acknowledged,
//              reported, or times out.
//
// Thread safety: owned by one Core.
#pragma once

#include <cstdint>

#include <elfin/raft/entry.hpp>

#include "inflights.hpp"

namespace elfin::raft::internal {

enum class ProgressState : std::uint8_t { Probe, Replicate, Snapshot };

struct Progress {
  explicit Progress(std::size_t max_inflight) : inflights(max_inflight) {}

  Index match = 0;
  Index next = 1;
  ProgressState state = ProgressState::Probe;
  bool probe_sent = false;        ///< Probe: an Append is out, wait for a response
  Index pending_snapshot = 0;     ///< Snapshot: the index of the snapshot sent
  int snapshot_elapsed = 0;       ///< Snapshot: ticks since it was sent
  bool recent_active = false;     ///< heard from within this election timeout (check-quorum)
  std::uint64_t lease_stamp = 0;  ///< the latest leader tick stamp this follower echoed
  Index match_at_heartbeat = 0;   ///< `match` at the previous heartbeat response
  bool learner = false;
  bool quiesced = false;  ///< acknowledged a quiescing heartbeat sent after the last activity
  Inflights inflights;

  void become_probe() noexcept;
  void become_replicate() noexcept;
  void become_snapshot(Index snapshot_index) noexcept;
  /// An acknowledgement up to `index`; false when it tells nothing new.
  bool maybe_update(Index index) noexcept;
  /// A rejection of the Append after `rejected`, the follower hinting that `hint_next` may match;
  /// false when the rejection is stale (an older Append).
  bool maybe_decrease(Index rejected, Index hint_next) noexcept;
  [[nodiscard]] bool paused() const noexcept;
};

}  // namespace elfin::raft::internal
