// Scheduler: the worker threads that run actors.
//
// Each worker has its own stack of runnable actors: an actor woken by the actor running on a
// worker is pushed there and, being on top, runs next on a warm cache with no cross-thread handoff
// (a request and its answer usually stay on one core). Newest-first also makes spawning trees of
// actors go depth-first, so a skynet-like workload keeps few actors alive at once.
//
// Fairness: a worker takes at most kMaxLocalStreak actors in a row from the top of its stack; then
// it serves the global queue (actors woken from outside the workers, actors that spent their coop
// budget or called `yield_now`) and the bottom of its stack, where the oldest work waits. Idle
// workers steal the older half of another worker's stack, but only when the victim has more than
// the one actor it is about to run next.
//
// Idle workers spin for some microseconds (pause, then yield), then sleep on a condition
// variable; pushes wake a sleeper only if one sleeps (and, for local pushes, if there is work to
// steal). A sleeper also wakes every millisecond to look for work to steal: a push that races with
// a worker falling asleep may not wake it, which delays parallelism but never loses work (the
// pushing worker runs its own stack).
//
// Thread safety: `schedule` from any thread; `start`/`stop` from the owner.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <elfin/detail/ring_buffer.hpp>
#include <elfin/detail/spin_lock.hpp>

namespace elfin::detail {

class ActorCell;

class Scheduler {
 public:
  explicit Scheduler(unsigned workers);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  void start();
  /// Stops the workers (actors still queued are abandoned) and joins them.
  void stop();
  [[nodiscard]] unsigned workers() const { return static_cast<unsigned>(workers_.size()); }

  /// Queues an actor that was just moved to Scheduled (by exactly one caller).
  void schedule(ActorCell* cell);

  struct Worker;  // per-thread state; public only so the thread_local pointer can name it

 private:
  static constexpr unsigned kMaxLocalStreak = 16;
  static constexpr unsigned kSpinRounds = 2048;
  static constexpr unsigned kPollEvery = 32;
  /// Polls after a notification before the actor is requeued (a chatty mailbox can keep an actor
  /// that waits for something else busy forever otherwise).
  static constexpr unsigned kMaxRepolls = 64;

  void worker_main(Worker& worker);
  ActorCell* next_cell(Worker& worker);
  ActorCell* find_work(Worker& worker);
  ActorCell* steal(Worker& thief);
  ActorCell* pop_global();
  void run_cell(ActorCell* cell);
  void push_global(ActorCell* cell);
  void wake_sleeper();

  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  RingBuffer<ActorCell*> global_;  // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::atomic<bool> stop_requested_{false};
  std::atomic<unsigned> sleeping_{0};
  std::atomic<std::size_t> global_len_{0};
  std::vector<std::thread> threads_;
};

}  // namespace elfin::detail
