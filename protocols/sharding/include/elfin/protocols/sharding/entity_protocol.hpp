// What a sender of entity messages asks of its own pod (protocol `sharding`): a pause before it
// tries again, answered by the pod's sharding actor after `delay_ms` — how a coroutine waits out a
// backoff without blocking its worker thread (elfin::actors::sharding::request_entity uses it).
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>

#include <elfin/messages.hpp>

namespace elfin::protocols::sharding {

struct Backoff {
  std::uint32_t delay_ms = 0;
  ELFIN_REQUEST(sharding, Backoff, elfin::Unit, delay_ms);
};

}  // namespace elfin::protocols::sharding

ELFIN_EXTERN_MESSAGE(elfin::protocols::sharding::Backoff);
