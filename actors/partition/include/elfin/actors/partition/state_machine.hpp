// StateMachine: what a partition replicates. The partition actor applies every committed command
// to it, in log order, exactly once per replica; asks it queries; and saves and restores it
// through snapshots. Implementations are deterministic: the same commands in the same order give
// the same state and the same responses on every replica.
//
// `apply` sees each committed entry once (a replica restarting from a snapshot restores it and
// continues after the snapshot's index). Commands that fail (a compare-and-set that does not
// match) answer with an error in their response bytes; an exception from `apply` fails the
// partition actor, which restarts and recovers.
//
// Thread safety: one instance per partition actor, used from that actor only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace elfin::actors::partition {

using Bytes = std::vector<std::uint8_t>;

class StateMachine {
 public:
  StateMachine() = default;
  StateMachine(const StateMachine&) = delete;
  StateMachine& operator=(const StateMachine&) = delete;
  virtual ~StateMachine() = default;

  /// Applies the committed command at log `index`; returns the response for its proposer.
  [[nodiscard]] virtual Bytes apply(std::uint64_t index, std::span<const std::uint8_t> command) = 0;
  /// Answers a read-only query against the current state.
  [[nodiscard]] virtual Bytes query(std::span<const std::uint8_t> query) const = 0;
  /// The whole state, as `restore` reads it back.
  [[nodiscard]] virtual Bytes snapshot() const = 0;
  /// Replaces the state with a snapshot's (throws on bytes it cannot read).
  virtual void restore(std::span<const std::uint8_t> snapshot) = 0;
};

/// Makes the state machine of a partition (called when its actor starts, and again on restart).
using StateMachineFactory = std::function<std::unique_ptr<StateMachine>(std::uint64_t partition)>;

}  // namespace elfin::actors::partition
