#include "reactor.hpp"

#include <asio/post.hpp>

namespace elfin::network::detail {

bool Reactor::wait(std::chrono::nanoseconds timeout) {
  if (!token_.try_lock()) {
    // The I/O thread covers the loop: ask it back. It lets go after the handler it is in.
    wanted_.store(true, std::memory_order_relaxed);
    interrupt();
    if (!token_.try_lock_for(kHandOver)) return false;
  }
  std::lock_guard token(token_, std::adopt_lock);
  if (io_.stopped()) return false;
  worker_turns_.fetch_add(1, std::memory_order_relaxed);
  io_.run_one_for(timeout);
  return true;
}

void Reactor::interrupt() {
  asio::post(io_, [] {});
}

void Reactor::detach() {
  {
    std::lock_guard lock(cover_mu_);
    detached_ = true;
  }
  cover_cv_.notify_one();
  interrupt();  // the I/O thread may be covering the loop, waiting for an event
}

void Reactor::run_io_thread(bool shared) {
  if (shared) {
    std::uint64_t seen = worker_turns_.load(std::memory_order_relaxed);
    std::unique_lock lock(cover_mu_);
    while (!detached_) {
      if (cover_cv_.wait_for(lock, kCoverAfter) == std::cv_status::no_timeout) continue;
      const std::uint64_t turns = worker_turns_.load(std::memory_order_relaxed);
      if (turns != seen) {
        seen = turns;  // a worker drove the loop lately
        continue;
      }
      // Cleared before taking the token, so a worker that asks for it from now on is heard.
      wanted_.store(false, std::memory_order_relaxed);
      if (!token_.try_lock()) continue;  // a worker waits in it
      // No worker took the loop for a whole kCoverAfter and none is in it: all are busy.
      lock.unlock();
      {
        std::lock_guard token(token_, std::adopt_lock);
        while (!wanted_.load(std::memory_order_relaxed) && !io_.stopped()) {
          io_.run_one_for(kCoverAfter);
          std::lock_guard cover(cover_mu_);
          if (detached_) break;
        }
      }
      lock.lock();
      seen = worker_turns_.load(std::memory_order_relaxed);
    }
  }
  // Workers have let go (detach comes after the scheduler's): the rest is this thread's alone.
  std::lock_guard token(token_);
  io_.run();
}

}  // namespace elfin::network::detail
