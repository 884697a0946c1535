// What senders of entity messages and broadcasts ask of pods (protocol `sharding`):
//
//   Backoff      a pause before a sender tries again, answered by the sender's own pod's sharding
//                actor after `delay_ms` — how a coroutine waits out a backoff without blocking its
//                worker thread (elfin::actors::sharding::request_entity uses it).
//   LocateGroup  asked of a pod's sharding actor (its `endpoint`): the address of the group that
//                registered under `name` on that pod's node (0: none), so a sender can address one
//                pod's group on its node — a broadcast reaches every pod this way, and a sender
//                given an owner hint goes straight to the owner's entity group.
//   ShardOwner   sent like an entity message of `shard` (to an entity group, or to the group
//                fronting it on every pod node): the receiving pod answers Ok if it owns the
//                shard now, else a ShardingError of kind NotOwner carrying its epoch and owner
//                hint. A router can only refuse a message (the send reports NoRoute, a request
//                fails untyped), so this is how a sender learns, typed, why it was refused.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <string>

#include <elfin/messages.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::sharding {

struct Backoff {
  std::uint32_t delay_ms = 0;
  ELFIN_REQUEST(sharding, Backoff, elfin::Unit, delay_ms);
};

struct LocateGroup {
  std::string name;
  ELFIN_REQUEST(sharding, LocateGroup, std::uint64_t, name);
};

struct ShardOwner {
  std::uint32_t shard = 0;
  ELFIN_REQUEST(sharding, ShardOwner, (elfin::Result<elfin::Unit, ShardingError>), shard);
};

}  // namespace elfin::protocols::sharding

ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::Backoff);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::LocateGroup);
ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::ShardOwner);
