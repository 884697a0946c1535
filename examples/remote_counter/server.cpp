// The counters (see remote_counter.hpp): one actor per name, started by the first message for it.
#include <cstdint>
#include <string>
#include <utility>

#include <elfin/elfin.hpp>

#include "protocol.hpp"
#include "remote_counter.hpp"

namespace remote_counter {

namespace {

using namespace elfin;
using Outcome = elfin::Outcome<std::string>;

Task<> counter_actor(Context<NoConfig, std::string> ctx) {
  std::uint64_t value = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Increment& m) { value += m.by; },
        [&](const Add& m, ResponseToken<Add> token) {
          value += m.by;
          // Which node counted what is how the multi-node tests tell unicast from broadcast.
          log::info("{} = {} (+{})", ctx.key(), value, m.by);
          ctx.respond(std::move(token), value);
        },
        [&](const Get&, ResponseToken<Get> token) { ctx.respond(std::move(token), value); });
  }
}

Outcome route(const Envelope& envelope) {
  if (const auto* m = envelope.get<Increment>()) return Outcome::Unicast(m->name);
  if (const auto* m = envelope.get<Add>()) return Outcome::Unicast(m->name);
  if (const auto* m = envelope.get<Get>()) return Outcome::Unicast(m->name);
  return Outcome::Default();
}

}  // namespace

Blueprint server() { return ActorGroup().router(MapRouter<std::string>(route)).exec(counter_actor); }

}  // namespace remote_counter
