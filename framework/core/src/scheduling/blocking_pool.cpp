#include "scheduling/blocking_pool.hpp"

#include <elfin/internal/thread_name.hpp>

namespace elfin::detail {

BlockingPool::BlockingPool(unsigned max_threads) : max_threads_(max_threads == 0 ? 1 : max_threads) {}

BlockingPool::~BlockingPool() { stop(); }

void BlockingPool::submit(std::function<void()> job) {
  {
    std::unique_lock lock(mu_);
    if (!stopping_) {
      jobs_.push_back(std::move(job));
      // Every idle thread has a job of its own waiting for it already: one more thread.
      if (idle_ < jobs_.size() && threads_.size() < max_threads_) threads_.emplace_back([this] { run(); });
      lock.unlock();
      cv_.notify_one();
      return;
    }
  }
  job();
}

void BlockingPool::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

void BlockingPool::run() {
  name_this_thread("elfin-blocking");
  std::unique_lock lock(mu_);
  for (;;) {
    if (jobs_.empty()) {
      if (stopping_) return;
      ++idle_;
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      --idle_;
      continue;
    }
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // its captures (a waker, the state) go before the next wait
    lock.lock();
  }
}

}  // namespace elfin::detail
