// The counter protocol: what any actor may say to a counter. It is the elfo book's counter,
// written with elfin's message macros.
//
// A protocol header holds messages only, no logic: both the counters and their clients include
// it, and neither includes the other.
#pragma once

#include <cstdint>

#include <elfin/message.hpp>

namespace counter {

/// Adds `delta` to the counter.
struct Increment {
  std::uint32_t delta = 1;
  ELFIN_MESSAGE(counter, Increment, delta);
};

/// Asks for the counter's current value.
struct GetValue {
  ELFIN_REQUEST(counter, GetValue, std::uint64_t);
};

}  // namespace counter
