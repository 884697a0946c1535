// The sharding protocol (`sharding` in routes and dumps): every message between pods and the shard
// manager, and between pods, one header per side (manager_protocol.hpp, pod_protocol.hpp,
// entity_protocol.hpp) plus the values they carry (pod_ref.hpp, assignments.hpp,
// sharding_error.hpp). Messages only, no logic: the manager and the pods depend on it, never on
// each other. Include this header for all of them.
#pragma once

#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
