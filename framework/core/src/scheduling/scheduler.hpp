// Scheduler: the worker threads that run actors.
//
// Each worker has its own stack of runnable actors: an actor woken by the actor running on a
// worker is pushed there and, being on top, runs next on a warm cache with no cross-thread handoff
// (a request and its answer usually stay on one core). Newest-first also makes spawning trees of
// actors go depth-first, so a skynet-like workload keeps few actors alive at once.
//
// Fairness: a worker takes at most kMaxLocalStreak actors in a row from the top of its stack; then
// it serves the global queue (actors woken from outside the workers) and the bottom of its stack,
// where the oldest work waits. An actor that spent its coop budget or called `yield_now` goes to
// that bottom: behind everything its worker has, and first in line for an idle worker's steal.
// (Not the global queue: an idle worker would take it at once, and a producer and its consumer
// would end up on two cores, handing every message across; a 1→1 stream then ran at ~60% of its
// speed on one core.) Idle workers steal the older half of another worker's stack, but only when
// the victim has more than the one actor it is about to run next.
//
// Idle workers spin for some microseconds (pause, then yield), then sleep on a condition
// variable. At most half the workers (at least one) spin at a time: more spinners would only take
// CPU from threads that have work (other workers, I/O threads, other processes; see the network
// figures in tests/bench/README.md). Pushes wake a sleeper only if one sleeps and none spins (a
// spinner finds the work by itself; a futex wake would be spent for nothing) and, for local
// pushes, only if there is work to steal. A sleeper also wakes every millisecond to look for work
// to steal: a push that races with a worker falling asleep may not wake it, which delays
// parallelism but never loses work (the pushing worker runs its own stack).
//
// An I/O thread that delivers many messages at once (the network, one socket read) batches the
// wake-ups: a fast consumer would otherwise go idle between two messages and be queued (a lock,
// perhaps a futex wake) once per message; batched, once per flush. A batch holds actors back for
// at most the time the thread spends between two flushes.
//
// An idle worker waits in the system's IdleWaiter (the network's reactor), when there is one and
// no other worker waits there, instead of spinning and sleeping: a frame read there wakes its
// actor onto that worker's stack, and the worker runs it right after the read, where a separate
// I/O thread would have queued it and woken a worker (a second thread hand-off per message). Only
// one worker waits there at a time; the others spin and sleep as above. A push that finds no
// sleeper on the condition variable wakes the worker in the waiter by interrupting it.
//
// What an actor's run asks to flush when it ends (a connection's answers, see RunEndFlush in
// system_hooks.hpp) its worker flushes right after the run, before it looks for the next actor.
//
// Under virtual time the scheduler also counts actors in flight (queued or running), so the
// advancing thread can wait until the system is quiescent; see `in_flight_` for why the count
// never reads zero while work is pending. Real-time systems skip the count (one shared atomic
// per scheduling would be contended on the hot path).
//
// Thread safety: `schedule` from any thread; `start`/`stop` from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <elfin/detail/spin_lock.hpp>
#include <elfin/internal/ring_buffer.hpp>

namespace elfin::detail {

class ActorCell;
class IdleWaiter;
class RunEndFlush;

class Scheduler {
 public:
  /// `track_in_flight` enables `wait_quiescent` (virtual time).
  explicit Scheduler(unsigned workers, bool track_in_flight = false);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  void start();
  /// Stops the workers (actors still queued are abandoned) and joins them.
  void stop();
  [[nodiscard]] unsigned workers() const { return static_cast<unsigned>(workers_.size()); }

  /// Queues an actor that was just moved to Scheduled (by exactly one caller).
  void schedule(ActorCell* cell);

  /// On a thread that is not one of the workers (an I/O thread delivering a burst of messages):
  /// until `end_batch`, actors this thread wakes are collected and queued together at each
  /// `flush_batch`, with one lock and at most one wake-up, instead of one of each per actor.
  /// Batches do not nest.
  void begin_batch();
  void flush_batch();
  void end_batch();

  /// Waits until no actor is queued or running; false if `deadline` passed first. Only with
  /// `track_in_flight`; actors woken by threads other than workers and the caller (a signal, a
  /// real-time timer) are not waited for unless they are already queued.
  [[nodiscard]] bool wait_quiescent(std::chrono::steady_clock::time_point deadline);
  [[nodiscard]] std::size_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  /// Counts as one actor in flight until `release` (QuiescenceHold: work outside the workers).
  /// No-ops without `track_in_flight`.
  void hold() {
    if (track_in_flight_) in_flight_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() { leave_flight(); }

  /// See IdleWaiter (system_hooks.hpp): false under `track_in_flight`. With nullptr, returns once
  /// no worker is in the previous waiter or about to enter it.
  [[nodiscard]] bool set_idle_waiter(IdleWaiter* waiter);

  /// See flush_after_run (system_hooks.hpp).
  [[nodiscard]] static bool defer_to_run_end(std::shared_ptr<RunEndFlush> target);

  struct Worker;  // per-thread state; public only so the thread_local pointer can name it

 private:
  static constexpr unsigned kMaxLocalStreak = 16;
  /// An idle worker's spin: this many pauses, then a few yields, then it sleeps. The yields are
  /// few because each is a system call: on a machine whose cores are all taken (a pod beside its
  /// clients and WAL thread) a long run of them costs more CPU than the sleep and wake they save.
  static constexpr unsigned kPauseRounds = 128;
  static constexpr unsigned kYieldRounds = 16;
  static constexpr unsigned kSpinRounds = kPauseRounds + kYieldRounds;
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
  /// An actor that yielded (coop budget, `yield_now`): to the bottom of this worker's stack.
  void requeue_behind(ActorCell* cell);
  void push_global(ActorCell* cell);
  void push_global(const std::vector<ActorCell*>& cells);
  void wake_sleeper();
  /// mu_ held: wakes a worker sleeping on cv_, or else the one in the idle waiter.
  void wake_one_locked();
  /// An idle worker waits in the idle waiter if there is one and nobody else is in it; false if
  /// it did not (it sleeps as usual then).
  bool wait_in_waiter(std::unique_lock<std::mutex>& lock);
  /// A spinning worker will find new work by itself: waking a sleeper too would cost a futex
  /// wake for nothing.
  [[nodiscard]] bool nobody_spinning() const { return spinning_.load(std::memory_order_relaxed) == 0; }
  /// A queued or running actor is done for now (idle or finished).
  void leave_flight();

  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  RingBuffer<ActorCell*> global_;  // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::atomic<bool> stop_requested_{false};
  std::atomic<unsigned> sleeping_{0};  // on cv_ or in the idle waiter
  unsigned cv_sleepers_ = 0;           // guarded by mu_
  IdleWaiter* in_waiter_ = nullptr;    // guarded by mu_: the waiter a worker waits in
  // The idle waiter, and the workers between reading it and leaving it (set_idle_waiter waits for
  // them before its caller may destroy the old one).
  std::atomic<IdleWaiter*> waiter_{nullptr};
  std::atomic<unsigned> waiter_users_{0};
  std::atomic<unsigned> spinning_{0};
  unsigned max_spinning_ = 1;
  std::atomic<std::size_t> global_len_{0};
  std::vector<std::thread> threads_;

  // Actors queued or running (only if track_in_flight_). `schedule` increments it on the thread
  // that moved the cell Idle→Scheduled; the worker decrements it when the cell goes idle or
  // finishes, never when it requeues one. Work is created either by a running actor, whose own
  // unit is still counted, or by the thread that waits (a timer it fires, a proxy send), before it
  // waits. All updates are RMWs on one atomic, so they form one modification order that respects
  // each thread's program order: an actor's increment for the actor it woke precedes its own
  // decrement, and the count cannot pass through zero while either is pending.
  const bool track_in_flight_;
  std::atomic<std::size_t> in_flight_{0};
  std::mutex quiet_mu_;
  std::condition_variable quiet_cv_;  // notified when in_flight_ drops to zero
};

}  // namespace elfin::detail
