// The ping-pong demo: a pinger and a ponger in two groups, joined by one route.
//
//   pingers ──pingpong.*──▶ pongers
//
// The pinger serves N balls (argv[1], default 5) one at a time; the ponger hits each one back
// to its sender with `send_to`, which needs no route. Every rally starts a new trace, and both
// sides print its id: the trace id travels with the messages. Then the pinger asks for the
// score (a request and its response) and terminates the system, so the program exits with 0.
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

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
    // Handlers given to `match` are plain functions and cannot `co_await`, so a message whose
    // handling waits (here, a bounded send) is picked out in the loop body instead.
    if (const Serve* serve = envelope->get<Serve>()) {
      fmt::print("ponger: returns ball {}  [trace {}]\n", serve->ball, ctx.trace_id().raw());
      auto hit = co_await ctx.send_to(envelope->sender(), Return{serve->ball});
      if (hit) ++returned;
      continue;
    }
    match(*envelope, [&](const GetScore&, ResponseToken<GetScore> token) { ctx.respond(std::move(token), returned); });
  }
}

std::optional<std::uint32_t> parse_rounds(const char* text) {
  std::uint32_t rounds = 0;
  const char* end = text + std::strlen(text);
  auto [rest, error] = std::from_chars(text, end, rounds);
  if (error != std::errc{} || rest != end || rounds == 0) return std::nullopt;
  return rounds;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::uint32_t> rounds = 5;
  if (argc > 1) rounds = parse_rounds(argv[1]);
  if (argc > 2 || !rounds) {
    fmt::print(stderr, "usage: ping_pong [rounds]   (rounds: a positive number, default 5)\n");
    return 2;
  }

  Topology topology;
  auto pingers = topology.local("pingers");
  auto pongers = topology.local("pongers");
  pingers.route_to(pongers, filters::protocol("pingpong"));
  pingers.mount(ActorGroup().config<PingerConfig>().exec(pinger)).entrypoint();
  pongers.mount(ActorGroup().exec(ponger));

  // The pinger's config section, as a config file would hold it.
  StartOptions options;
  options.config_toml = fmt::format("[pingers]\nrounds = {}\n", *rounds);
  return elfin::run(std::move(topology), std::move(options));
}
