// The pingpong protocol. (`Ping` itself is taken: it is a system message of protocol `elfin`.)
#pragma once

#include <cstdint>

#include <elfin/message.hpp>

namespace pingpong {

/// The pinger serves ball number `ball`.
struct Serve {
  std::uint32_t ball = 0;
  ELFIN_MESSAGE(pingpong, Serve, ball);
};

/// The ponger hits ball number `ball` back to whoever served it.
struct Return {
  std::uint32_t ball = 0;
  ELFIN_MESSAGE(pingpong, Return, ball);
};

/// How many balls has the ponger returned so far?
struct GetScore {
  ELFIN_REQUEST(pingpong, GetScore, std::uint32_t);
};

}  // namespace pingpong
