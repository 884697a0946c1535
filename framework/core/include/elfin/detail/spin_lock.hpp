// SpinLock: a mutex for critical sections of a few instructions (a mailbox's list of waiting
// senders, an answer slot update), where a pthread mutex's call and bookkeeping cost more than the
// work it guards.
//
// Test-and-test-and-set: waiters spin on a plain load (no cache-line ping-pong), pause the core,
// and yield the thread after a while so a preempted holder gets to run on a busy machine.
// Acquire on lock / release on unlock give the same happens-before as std::mutex, which is also
// what ThreadSanitizer models. Never hold it across anything that can block or allocate a lot.
#pragma once

#include <atomic>
#include <thread>

namespace elfin::detail {

class SpinLock {
 public:
  void lock() noexcept {
    for (unsigned spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpinsBeforeYield) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr unsigned kSpinsBeforeYield = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace elfin::detail
