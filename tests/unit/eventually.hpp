// Waiting in tests for state no one signals (the number of live actors, a peer in a network info,
// a file's contents): poll with a deadline, never sleep "long enough".
#pragma once

#include <chrono>
#include <thread>

namespace elfin::test {

/// Polls `done` every millisecond until it holds (true) or `timeout` passes (false, after one
/// last look). Tests REQUIRE or CHECK the result, so a condition that never holds fails the test
/// with its expression instead of hanging it.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  return done();
}

}  // namespace elfin::test
