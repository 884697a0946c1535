// The ping-pong demo's actors (see ping_pong.hpp).
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

#include "ping_pong.hpp"
#include "protocol.hpp"

namespace {

using namespace elfin;
using namespace pingpong;

struct PingerConfig {
  std::uint32_t rounds = 5;  ///< rallies to play
  ELFIN_CONFIG(rounds);
};

Task<> pinger(Context<PingerConfig> ctx) {
  const std::uint32_t rounds = ctx.config().rounds;
  fmt::print("pinger: serving {} balls to the pongers\n", rounds);

  for (std::uint32_t ball = 1; ball <= rounds; ++ball) {
    ctx.set_trace_id(TraceId::generate());  // every rally is a trace of its own
    auto served = co_await ctx.send(Serve{ball});
    if (!served) {
      fmt::print("pinger: could not serve ball {}: {}\n", ball, served.error());
      break;
    }
    // Wait for the ball to come back, skipping anything else (the first envelope is the
    // ConfigUpdated that started the pinger). No envelope means the mailbox closed: the system
    // is terminating.
    std::optional<Envelope> envelope;
    do {
      envelope = co_await ctx.recv();
    } while (envelope && !envelope->is<Return>());
    if (!envelope) co_return;
    fmt::print("pinger: ball {} is back  [trace {}]\n", envelope->get<Return>()->ball, ctx.trace_id().raw());
  }

  // One request/response round: `co_await` suspends the pinger until the ponger answers.
  auto score = co_await ctx.request(GetScore{});
  if (score) {
    fmt::print("pinger: the ponger says it returned {} balls\n", *score);
  } else {
    fmt::print("pinger: GetScore failed: {}\n", score.error());
  }

  fmt::print("pinger: game over, terminating the system\n");
  ctx.terminate_system("the game is over");
}

Task<> ponger(Context<> ctx) {
  std::uint32_t returned = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        // A coroutine handler: the bounded send waits while the pinger's mailbox is full, and the
        // ponger takes its next message only once the ball is back on its way.
        [&](const Serve& serve) -> Task<> {
          fmt::print("ponger: returns ball {}  [trace {}]\n", serve.ball, ctx.trace_id().raw());
          auto hit = co_await ctx.send_to(envelope->sender(), Return{serve.ball});
          if (hit) ++returned;
        },
        [&](const GetScore&, ResponseToken<GetScore> token) { ctx.respond(std::move(token), returned); });
  }
}

}  // namespace

namespace ping_pong {

using namespace elfin;

elfin::Blueprint pingers() { return ActorGroup().config<PingerConfig>().exec(pinger); }
elfin::Blueprint pongers() { return ActorGroup().exec(ponger); }

void register_blueprints(elfin::BlueprintRegistry& registry) {
  std::ignore = registry.add("ping_pong.pinger", pingers(), "serves `[pingers] rounds` balls, then ends the game");
  std::ignore = registry.add("ping_pong.ponger", pongers(), "returns every ball to its sender");
}

elfin::Topology topology() {
  Topology topology;
  auto pingers_group = topology.local("pingers");
  auto pongers_group = topology.local("pongers");
  pingers_group.route_to(pongers_group, filters::protocol("pingpong"));
  pingers_group.mount(pingers()).entrypoint();
  pongers_group.mount(pongers());
  return topology;
}

}  // namespace ping_pong
