// The sharding protocol's message vtables, compiled once.
#include <string_view>

#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>

ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::Register);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::Unregister);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::GetAssignments);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::ReportUnhealthyPod);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::PingPod);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::AssignShards);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::UnassignShards);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::AssignmentsChanged);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::Backoff);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::LocateGroup);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::sharding::ShardOwner);

namespace elfin::protocols::sharding {

std::string_view to_string(ShardingErrorKind kind) noexcept {
  switch (kind) {
    case ShardingErrorKind::ShardFunctionMismatch:
      return "shard function mismatch";
    case ShardingErrorKind::PodDead:
      return "the health check says the pod is dead";
    case ShardingErrorKind::StaleIncarnation:
      return "a newer incarnation is registered at this address";
    case ShardingErrorKind::UnknownPod:
      return "unknown pod";
    case ShardingErrorKind::StorageUnavailable:
      return "the assignment storage is unavailable; nothing changed";
    case ShardingErrorKind::WrongIncarnation:
      return "wrong incarnation";
    case ShardingErrorKind::StaleEpoch:
      return "stale epoch";
    case ShardingErrorKind::Draining:
      return "the pod is stopping";
    case ShardingErrorKind::NotOwner:
      return "not the owner of the shard";
    case ShardingErrorKind::BadRequest:
      return "bad request";
    case ShardingErrorKind::Other:
      return "error";
  }
  return "unknown sharding error";
}

}  // namespace elfin::protocols::sharding
