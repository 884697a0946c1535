// Forward declarations of elfin::assignment's types, for headers that only name them.
#pragma once

#include <cstdint>

namespace elfin::assignment {

using ShardId = std::uint32_t;
class PodVersion;
struct PodId;
struct Pod;
class [[nodiscard]] AssignmentMap;
struct Move;
struct [[nodiscard]] RebalancePlan;
struct PlanError;
struct RebalanceOptions;
class [[nodiscard]] ReplicaMap;
struct ReplicaMove;
struct [[nodiscard]] ReplicaPlan;
struct ReplicaOptions;
enum class RoundKind : std::uint8_t;

}  // namespace elfin::assignment
