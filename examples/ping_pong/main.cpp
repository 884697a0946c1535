// The ping-pong demo with its topology built in C++ (the same one topology.toml describes, which
// `elfin-demo run examples/ping_pong/topology.toml` runs).
//
//   ping_pong [rounds]     rounds: a positive number, default 5
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include <elfin/system.hpp>

#include "ping_pong.hpp"

namespace {

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
  // The pinger's config section, as a config file would hold it.
  elfin::StartOptions options;
  options.config_toml = fmt::format("[pingers]\nrounds = {}\n", *rounds);
  return elfin::run(ping_pong::topology(), std::move(options));
}
