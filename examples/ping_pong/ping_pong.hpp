// The ping-pong demo's two groups, for a C++ topology (main.cpp) and for topology files
// (topology.toml, run by `elfin run`).
//
//   pingers ──pingpong.*──▶ pongers
//
// The pinger serves N balls (`[pingers] rounds`, default 5) one at a time; the ponger hits each
// one back to its sender with `send_to`, which needs no route. Every rally starts a new trace,
// and both sides print its id: the trace id travels with the messages. Then the pinger asks for
// the score (a request and its response) and terminates the system, so the program exits with 0.
#pragma once

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/topology.hpp>

namespace ping_pong {

[[nodiscard]] elfin::Blueprint pingers();
[[nodiscard]] elfin::Blueprint pongers();

/// Registers "ping_pong.pinger" and "ping_pong.ponger".
void register_blueprints(elfin::BlueprintRegistry& registry);

/// The topology of topology.toml, built in C++.
[[nodiscard]] elfin::Topology topology();

}  // namespace ping_pong
