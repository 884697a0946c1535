// What the pod's own sources tell its sharding actor (protocol `sharding_pod`): answers of the
// requests it runs as streams next to its mailbox (so it keeps answering the manager meanwhile),
// and its timers.
#pragma once

#include <cstdint>
#include <string>

#include <elfin/message.hpp>
#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>

namespace elfin::actors::sharding::internal {

struct FetchDone {
  bool ok = false;
  protocols::sharding::Assignments assignments;
  std::string detail;
  ELFIN_MESSAGE(sharding_pod, FetchDone, ok, assignments, detail);
};

struct RegisterDone {
  bool ok = false;
  bool refused = false;  ///< the manager answered with an error (else: no answer at all)
  protocols::sharding::ShardingErrorKind kind = protocols::sharding::ShardingErrorKind::Other;
  protocols::sharding::Assignments assignments;
  std::string detail;
  ELFIN_MESSAGE(sharding_pod, RegisterDone, ok, refused, kind, assignments, detail);
};

struct UnregisterDone {
  std::string detail;  ///< empty: unregistered
  ELFIN_MESSAGE(sharding_pod, UnregisterDone, detail);
};

struct RetryStart {
  ELFIN_MESSAGE(sharding_pod, RetryStart);
};

struct RefreshTick {
  ELFIN_MESSAGE(sharding_pod, RefreshTick);
};

/// A sender's Backoff has waited its delay.
struct BackoffDone {
  std::uint64_t op = 0;
  ELFIN_MESSAGE(sharding_pod, BackoffDone, op);
};

struct ReportTick {
  ELFIN_MESSAGE(sharding_pod, ReportTick);
};

struct PassivateTick {
  ELFIN_MESSAGE(sharding_pod, PassivateTick);
};

/// Entities passivated entity_termination_timeout ago: those still running are killed.
struct PassivateDeadline {
  std::uint64_t op = 0;
  ELFIN_MESSAGE(sharding_pod, PassivateDeadline, op);
};

/// A pod that stopped asks for the map again while its entity groups hold messages.
struct HeldPoll {
  ELFIN_MESSAGE(sharding_pod, HeldPoll);
};

/// Whether the entities a stop waits for are gone yet.
struct StopCheck {
  std::uint64_t op = 0;
  ELFIN_MESSAGE(sharding_pod, StopCheck, op);
};

/// A stop waited entity_termination_timeout: answer anyway.
struct StopDeadline {
  std::uint64_t op = 0;
  ELFIN_MESSAGE(sharding_pod, StopDeadline, op);
};

}  // namespace elfin::actors::sharding::internal
