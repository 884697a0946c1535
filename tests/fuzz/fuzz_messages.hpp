// Message types linked into the fuzzers, so the registry has something for Message payloads to be
// decoded as (and the seed corpus has valid payloads to mutate from).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <elfin/message.hpp>

namespace elfin::fuzz {

struct Increment {
  std::uint32_t delta = 1;
  std::string tag;
  ELFIN_MESSAGE(fuzz, Increment, delta, tag);
};

struct Point {
  double x = 0;
  double y = 0;
  MSGPACK_DEFINE_MAP(x, y);
};

struct Reading {
  std::string sensor;
  std::vector<std::int64_t> history;
  std::map<std::string, bool> flags;
  std::vector<Point> points;
  ELFIN_MESSAGE(fuzz, Reading, sensor, history, flags, points);
};

struct Summarize {
  ELFIN_REQUEST(fuzz, Summarize, std::uint64_t);
};

}  // namespace elfin::fuzz
