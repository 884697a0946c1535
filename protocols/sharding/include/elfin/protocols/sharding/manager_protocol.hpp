// What pods ask of the shard manager (protocol `sharding`). Route them to the manager group (a
// remote group on the manager's node in a cluster). Every answer that changes the manager's state
// is given only after the change is persisted; when the storage fails the answer is
// `StorageUnavailable` and nothing changed.
//
//   Register            a pod joins: its identity, where its sharding actor is, its version and
//                       shard function. Refused when the shard function differs from the
//                       cluster's. The first pod to register triggers a rebalance at once (it gets
//                       every shard); later pods get shards at the next regular rebalance.
//   Unregister          a pod leaves, after it has stopped its entities; its shards are placed
//                       on the other pods at once.
//   GetAssignments      the current map and its epoch (a pod reads it at start, before serving).
//   ReportUnhealthyPod  a pod could not reach another one: the manager health-checks that pod and
//                       takes its shards away only if the check says it is dead.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <string>

#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::sharding {

/// What a successful Register says: the map as it is now (the pod's own shards arrive later, by
/// AssignShards).
struct Registered {
  Assignments assignments;
  ELFIN_PART(assignments);
};

struct Register {
  PodRef pod;
  std::uint64_t endpoint = 0;  ///< raw Addr of the pod's sharding actor; 0: the sender of Register
  std::string version;         ///< e.g. `1.2.0`; shards go only to the newest version present
  std::string shard_function;  ///< `<name>/<version>:<shards>`; must equal the cluster's
  ELFIN_REQUEST(sharding, Register, (elfin::Result<Registered, ShardingError>), pod, endpoint, version, shard_function);
};

struct Unregister {
  PodRef pod;
  ELFIN_REQUEST(sharding, Unregister, (elfin::Result<elfin::Unit, ShardingError>), pod);
};

struct GetAssignments {
  ELFIN_REQUEST(sharding, GetAssignments, Assignments);
};

struct ReportUnhealthyPod {
  PodRef pod;       ///< the pod that could not be reached
  PodRef reporter;  ///< who could not reach it (for the log)
  ELFIN_MESSAGE(sharding, ReportUnhealthyPod, pod, reporter);
};

}  // namespace elfin::protocols::sharding

ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::Register);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::Unregister);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::GetAssignments);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::ReportUnhealthyPod);
