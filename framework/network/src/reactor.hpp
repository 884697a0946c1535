// Reactor: who runs the network's event loop (its asio io_context) — an idle worker, or else the
// network's I/O thread.
//
// One thread at a time runs the loop's handlers (the token), so everything a Connection keeps
// for "the I/O thread" (reading, handshake, timers, asynchronous writes) stays single-threaded:
// it belongs to whoever holds the token, and the token's mutex orders one holder's writes before
// the next holder's reads.
//
// An idle worker waits in the loop (IdleWaiter::wait): a frame it reads wakes the actor onto
// that worker's own stack, and the actor runs right after the read on the same thread. A remote
// round trip then wakes one thread per direction (the socket's reader), as raw TCP does, where a
// separate I/O thread adds a second wake-up per direction (I/O thread, then a worker).
//
// The I/O thread covers the loop while no worker can: it checks every kCoverAfter whether a
// worker took the token since its last look; if none did and the token is free, every worker is
// busy (a long actor, a flood of work), and it runs the loop itself until an idle worker asks for
// it back (`wanted_`, then an interrupt; the worker waits at most kHandOver for the token). So a
// busy system never leaves the network undriven for more than about kCoverAfter, and under
// sustained load the network runs as with a dedicated I/O thread (messages batched to the
// workers). The price is one timed wake-up of the I/O thread per kCoverAfter while workers drive.
//
// Thread safety: `wait` on workers (the scheduler lets one in at a time), `interrupt` from any
// thread, `run_io_thread` on the I/O thread, `detach` from any thread but the I/O thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include <asio/io_context.hpp>

#include <elfin/internal/system_hooks.hpp>

namespace elfin::network::detail {

class Reactor final : public elfin::detail::IdleWaiter {
 public:
  static constexpr std::chrono::milliseconds kCoverAfter{1};
  static constexpr std::chrono::milliseconds kHandOver{2};

  explicit Reactor(asio::io_context& io) : io_(io) {}

  // IdleWaiter
  [[nodiscard]] bool wait(std::chrono::nanoseconds timeout) override;
  void interrupt() override;

  /// The I/O thread's body. `shared`: workers may drive the loop (see above); otherwise the
  /// thread alone runs it. Returns when the loop has run out of work (after `detach`).
  void run_io_thread(bool shared);
  /// No worker drives the loop any more (the scheduler has let go of this waiter): the I/O thread
  /// runs it alone until it runs out of work.
  void detach();

 private:
  asio::io_context& io_;
  std::timed_mutex token_;
  std::atomic<bool> wanted_{false};             // an idle worker waits for the I/O thread's token
  std::atomic<std::uint64_t> worker_turns_{0};  // workers' takes of the token: the cover's sign
  std::mutex cover_mu_;
  std::condition_variable cover_cv_;
  bool detached_ = false;  // guarded by cover_mu_
};

}  // namespace elfin::network::detail
