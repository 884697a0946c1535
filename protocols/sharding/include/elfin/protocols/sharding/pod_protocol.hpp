// What the shard manager asks of a pod (protocol `sharding`), sent to the pod's sharding actor
// (its `endpoint`). Each command names the pod incarnation it is meant for; a process that is
// another incarnation answers `WrongIncarnation` and does nothing.
//
//   PingPod             "are you there, and who are you?": answered at once with the pod's own
//                       PodRef. The manager waits `ping_timeout` for it.
//   UnassignShards      stop these shards: the pod stops routing to them and answers only after
//                       every entity of those shards has stopped (bounded on the pod by its
//                       entity termination timeout). Until that answer the manager gives the
//                       shards to nobody, so no entity ever runs on two pods.
//   AssignShards        from map `epoch` on, these shards are yours. Sent only after the map of
//                       that epoch is persisted. Idempotent: shards already held stay; a pod
//                       that is stopping answers `Draining` and takes nothing.
//   AssignmentsChanged  the new map, after every change (persisted first). A pod applies it to
//                       other pods' entries only; its own come from Assign/Unassign.
//
// Epochs order the commands for one shard: a pod remembers, per shard, the highest epoch it was
// assigned or unassigned at, and answers `StaleEpoch` to a command with a lower one. A restarted
// manager bumps the epoch before it resends anything, so its commands are never mistaken for
// old ones.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <vector>

#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::sharding {

struct PingPod {
  PodRef pod;  ///< whom the manager believes it is talking to
  ELFIN_REQUEST(sharding, PingPod, PodRef, pod);
};

struct AssignShards {
  PodRef pod;
  std::vector<std::uint32_t> shards;  ///< ascending
  std::uint64_t epoch = 0;            ///< the persisted map that gives them to `pod`
  ELFIN_REQUEST(sharding, AssignShards, (elfin::Result<elfin::Unit, ShardingError>), pod, shards, epoch);
};

struct UnassignShards {
  PodRef pod;
  std::vector<std::uint32_t> shards;  ///< ascending
  std::uint64_t epoch = 0;            ///< the persisted map in which `pod` still owns them
  ELFIN_REQUEST(sharding, UnassignShards, (elfin::Result<elfin::Unit, ShardingError>), pod, shards, epoch);
};

struct AssignmentsChanged {
  Assignments assignments;
  ELFIN_MESSAGE(sharding, AssignmentsChanged, assignments);
};

}  // namespace elfin::protocols::sharding

ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::PingPod);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::AssignShards);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::UnassignShards);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::AssignmentsChanged);
