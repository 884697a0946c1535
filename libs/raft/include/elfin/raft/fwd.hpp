// Forward declarations of libs/raft's types, for headers that only name them.
#pragma once

#include <cstdint>

namespace elfin::raft {

using NodeId = std::uint64_t;
using Term = std::uint64_t;
using Index = std::uint64_t;

struct Entry;
struct HardState;
struct ConfState;
struct ConfChange;
struct SnapshotMeta;
struct Snapshot;
struct Message;
struct ReadState;
struct Ready;
struct Config;
struct Recovered;
struct ProposeRejected;
class ProposeResult;
class Node;

}  // namespace elfin::raft
