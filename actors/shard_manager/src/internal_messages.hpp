// What the manager's own sources tell it (protocol `sharding_manager`, never on the wire in
// practice, but declared like every message so dumps show them): answers of the pings and
// commands it runs as streams next to its mailbox, and its timers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <elfin/message.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>

namespace elfin::actors::shard_manager::internal {

/// Why the manager pinged: a step of a round, or a health check on its own.
enum class PingPurpose : std::uint8_t { Round, Health };
/// How a command (Assign/Unassign) ended.
enum class CommandResult : std::uint8_t { Ok, Refused, Failed, NoAnswer };

struct PingDone {
  std::uint64_t op = 0;  ///< the round id, or the health check's id
  std::uint8_t purpose = 0;
  protocols::sharding::PodRef pod;
  std::uint8_t outcome = 0;  ///< PingOutcome
  ELFIN_MESSAGE(sharding_manager, PingDone, op, purpose, pod, outcome);
};

struct CommandDone {
  std::uint64_t round = 0;
  bool unassign = false;
  protocols::sharding::PodRef pod;
  std::vector<std::uint32_t> shards;
  std::uint64_t epoch = 0;
  std::uint8_t result = 0;  ///< CommandResult
  std::string detail;
  ELFIN_MESSAGE(sharding_manager, CommandDone, round, unassign, pod, shards, epoch, result, detail);
};

/// The current phase of round `round` waited long enough.
struct PhaseTimeout {
  std::uint64_t round = 0;
  std::uint8_t phase = 0;
  ELFIN_MESSAGE(sharding_manager, PhaseTimeout, round, phase);
};

struct HealthTimeout {
  std::uint64_t op = 0;
  ELFIN_MESSAGE(sharding_manager, HealthTimeout, op);
};

struct RebalanceTick {
  ELFIN_MESSAGE(sharding_manager, RebalanceTick);
};

struct HealthSweep {
  ELFIN_MESSAGE(sharding_manager, HealthSweep);
};

struct RetryRebalance {
  ELFIN_MESSAGE(sharding_manager, RetryRebalance);
};

struct PersistRetry {
  std::uint64_t round = 0;
  ELFIN_MESSAGE(sharding_manager, PersistRetry, round);
};

}  // namespace elfin::actors::shard_manager::internal
