// A rebalance round in flight, as the manager carries it out (see shard_manager.hpp for the
// steps): the moves still to make, whose answers the current phase waits for, and which pods
// failed a step (health-checked when the round ends).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <elfin/actors/shard_manager/health_check.hpp>
#include <elfin/assignment/assignment_map.hpp>
#include <elfin/assignment/pod.hpp>
#include <elfin/assignment/rebalance.hpp>
#include <elfin/assignment/rebalance_plan.hpp>
#include <elfin/assignment/replica_map.hpp>
#include <elfin/assignment/replica_plan.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/request.hpp>

namespace elfin::actors::shard_manager::internal {

enum class Phase : std::uint8_t { Ping, Unassign, Persist, Assign };

struct Round {
  std::uint64_t id = 0;
  assignment::RoundKind kind = assignment::RoundKind::Regular;
  bool resync = false;  ///< the round after a (re)start: persist under a new epoch, resend every pod its shards
  std::chrono::steady_clock::time_point started;
  Phase phase = Phase::Ping;
  std::vector<assignment::ReplicaMove> moves;       ///< a replica added (no `from`), removed (no `to`) or moved
  std::set<assignment::PodId> awaiting;             ///< answers still due in this phase
  std::map<assignment::PodId, PingOutcome> failed;  ///< pods to health-check when the round ends
  std::set<assignment::PodId> recheck;  ///< failed an unassign or assign, not a ping: pinged afresh before judging
  std::map<assignment::PodId, std::vector<assignment::ShardId>> refused;  ///< shards a pod explicitly refused to take
  assignment::ReplicaMap next;
  bool failures = false;
};

struct DeferredUnregister {
  protocols::sharding::Unregister message;
  ResponseToken<protocols::sharding::Unregister> token;
};

}  // namespace elfin::actors::shard_manager::internal
