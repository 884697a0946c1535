// Waiting in tests for state no one signals (the number of live actors, a peer in a network info,
// a file's contents, another process's output or answers): poll with a deadline, never sleep
// "long enough".
#pragma once

#include <chrono>
#include <thread>

namespace elfin::test {

/// Polls `done` every `interval` until it holds (true) or `timeout` passes (false, after one last
/// look). Tests REQUIRE or CHECK the result, so a condition that never holds fails the test with
/// its expression instead of hanging it.
///
/// The 1 ms default suits state in this process (a counter, an actor count). A `done` that asks
/// another process (runs a CLI, scrapes HTTP, reads a node's output, calls a cluster) costs that
/// process work on every look: poll it at 10-100 ms.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds timeout = std::chrono::seconds{10},
                std::chrono::milliseconds interval = std::chrono::milliseconds{1}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(interval);
  }
  return done();
}

}  // namespace elfin::test
