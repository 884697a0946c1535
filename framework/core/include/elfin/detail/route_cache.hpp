// RouteCache: the actor a sending actor last resolved a unicast to, so that its next send to the
// same actor neither locks the routing map nor touches the target's reference count.
//
// Many senders streaming to one actor would otherwise all take the same lock (a group's routing
// shard, or an address-book stripe) and increment and decrement the same reference count on every
// message: three contended read-modify-writes per send on lines all senders share. Instead each
// sending actor keeps one entry: where it found the target (`home`: a routing shard or an address
// slot), that place's version then (`version`), and a reference to the target (`cell`). A send
// that finds the same home at the same version uses the cached target: the place changes version
// whenever an actor is added to or removed from it, so an unchanged version means the lookup would
// find the same actor. Reading the version is a load from a line that only spawns and exits write.
//
// The entry's reference keeps the target alive; a send's Targets *borrows* the pointer and pins
// the entry, and a pinned entry is not replaced, so the borrowed pointer outlives the send.
//
// Only the thread running the owning actor touches its cache (so no atomics); the runtime clears
// it when the actor's coroutine frame is gone (no pins left), which also breaks reference cycles.
// A finished target stays allocated (not running, its mailbox closed and drained) until its
// senders send elsewhere or finish.
#pragma once

#include <cstdint>
#include <memory>

namespace elfin::detail {

class ActorCell;

struct RouteCache {
  const void* home = nullptr;
  std::uint64_t version = 0;
  std::shared_ptr<ActorCell> cell;
  std::uint32_t pins = 0;  ///< Targets borrowing `cell` right now

  /// Remembers a lookup, unless a send still borrows the current entry.
  void fill(const void* where, std::uint64_t at_version, const std::shared_ptr<ActorCell>& found) {
    if (pins != 0) return;
    home = where;
    version = at_version;
    cell = found;
  }
  void clear() {
    home = nullptr;
    cell.reset();
  }
};

/// The route cache of the actor this thread is running, or null (not a worker, or no actor now).
[[nodiscard]] RouteCache* current_route_cache() noexcept;

}  // namespace elfin::detail
