// The counter protocol of the remote-counter example: what a client may say to the counters,
// wherever they run. Messages only, no logic; both sides include it, neither includes the other.
// Every field is named on the wire (msgpack map), so a node built later can add fields.
#pragma once

#include <cstdint>
#include <string>

#include <elfin/message.hpp>

namespace remote_counter {

/// Adds `by` to the counter `name`; no answer.
struct Increment {
  std::string name;
  std::uint64_t by = 1;
  ELFIN_MESSAGE(counter, Increment, name, by);
};

/// Adds `by` to the counter `name` and answers with its new value.
struct Add {
  std::string name;
  std::uint64_t by = 1;
  ELFIN_REQUEST(counter, Add, std::uint64_t, name, by);
};

/// Answers with the value of the counter `name` (0 for a counter never added to).
struct Get {
  std::string name;
  ELFIN_REQUEST(counter, Get, std::uint64_t, name);
};

}  // namespace remote_counter
