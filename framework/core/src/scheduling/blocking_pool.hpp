// BlockingPool: the threads that run `ctx.blocking(fn)` work (file writes and syncs, blocking
// library calls), so that no actor worker waits for them.
//
// Threads start lazily: a job queued while no thread is idle starts one more, up to `max_threads`;
// a system that never blocks starts none. Jobs are taken in FIFO order from one queue under a
// mutex: a blocking job lasts microseconds to milliseconds, so the lock is never the cost.
// `stop` lets the threads finish every job queued (their results reach actors that may have ended
// meanwhile, which drop them), then joins them.
//
// Thread safety: `submit` from any thread; `stop` from the owner, after which `submit` runs jobs
// inline (nothing is left to run them, and a late job must still wake its actor).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace elfin::detail {

class BlockingPool {
 public:
  explicit BlockingPool(unsigned max_threads);
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  ~BlockingPool();

  void submit(std::function<void()> job);
  /// Runs what is queued, then joins the threads. Idempotent.
  void stop();

 private:
  void run();

  const unsigned max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  unsigned idle_ = 0;                       // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::vector<std::thread> threads_;        // guarded by mu_
};

}  // namespace elfin::detail
