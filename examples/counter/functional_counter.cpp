// A functional actor: the whole actor is one coroutine, and its state lives in the frame.
#include <cstdint>
#include <utility>

#include <fmt/core.h>

#include <elfin/elfin.hpp>

#include "counters.hpp"
#include "protocol.hpp"

namespace counter {

namespace {

using namespace elfin;

Task<> exec(Context<> ctx) {
  // The actor's private state: nobody else can see it, so it needs no lock.
  std::uint64_t value = 0;

  // The main loop: wait for a message, handle it, repeat. `recv` yields nothing once the
  // mailbox is closed (when the system terminates), which ends the loop and the actor.
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Increment& increment) { value += increment.delta; },
        [&](const GetValue&, ResponseToken<GetValue> token) {
          fmt::print("functional counter: value is {}\n", value);
          ctx.respond(std::move(token), value);
        });
  }
}

}  // namespace

Blueprint functional() { return ActorGroup().exec(exec); }

}  // namespace counter
