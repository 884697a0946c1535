#include "scheduling/scheduler.hpp"

#include <cassert>
#include <chrono>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_series.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/internal/thread_name.hpp>
#include "actor/current_actor.hpp"
#include "actor/lifecycle.hpp"

#include "system/system_core.hpp"

namespace elfin::detail {

struct Scheduler::Worker {
  Scheduler* owner = nullptr;
  unsigned index = 0;
  unsigned streak = 0;
  SpinLock mu;
  RingBuffer<ActorCell*> stack;           // guarded by mu; top = back
  std::atomic<std::size_t> stack_len{0};  // read by thieves without the lock
};

namespace {
thread_local Scheduler::Worker* tls_worker = nullptr;

// The batch open on this (non-worker) thread, if any; see Scheduler::begin_batch.
struct Batch {
  Scheduler* owner = nullptr;
  std::vector<ActorCell*> cells;
};
thread_local Batch tls_batch;

// This worker is in the idle waiter (for an assertion).
thread_local bool tls_in_waiter = false;

// What the actor running on this worker asked to flush when its run ends (flush_after_run).
struct RunEnd {
  bool in_run = false;
  std::vector<std::shared_ptr<RunEndFlush>> pending;
};
thread_local RunEnd tls_run_end;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

Scheduler::Scheduler(unsigned workers, bool track_in_flight) : track_in_flight_(track_in_flight) {
  const unsigned n = workers == 0 ? std::max(1u, std::thread::hardware_concurrency()) : workers;
  for (unsigned i = 0; i < n; ++i) {
    auto w = std::make_unique<Worker>();
    w->owner = this;
    w->index = i;
    workers_.push_back(std::move(w));
  }
  max_spinning_ = std::max(1u, n / 2);
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::start() {
  threads_.reserve(workers_.size());
  for (auto& w : workers_) {
    threads_.emplace_back([this, worker = w.get()] {
      name_this_thread("elfin-worker-" + std::to_string(worker->index));
      worker_main(*worker);
    });
  }
}

void Scheduler::stop() {
  stop_requested_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (in_waiter_ != nullptr) in_waiter_->interrupt();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Scheduler::schedule(ActorCell* cell) {
  if (track_in_flight_) in_flight_.fetch_add(1, std::memory_order_relaxed);
  Worker* w = tls_worker;
  if (w == nullptr || w->owner != this) {
    if (tls_batch.owner == this) return tls_batch.cells.push_back(cell);
    return push_global(cell);
  }
  std::size_t len;
  {
    std::lock_guard lock(w->mu);
    w->stack.push_back(cell);
    len = w->stack.size();
    w->stack_len.store(len, std::memory_order_relaxed);
  }
  // More than the one actor this worker runs next: a sleeping worker could take some.
  if (len > 1 && nobody_spinning() && sleeping_.load(std::memory_order_relaxed) > 0) wake_sleeper();
}

void Scheduler::requeue_behind(ActorCell* cell) {
  // No wake-up here, unlike `schedule`: waking a sleeper to steal the actor would split a producer
  // from its consumer at every spent budget; a spinning worker still finds it, a sleeping one
  // within its millisecond.
  Worker* w = tls_worker;
  if (w == nullptr || w->owner != this) return push_global(cell);
  std::lock_guard lock(w->mu);
  w->stack.push_front(cell);  // the bottom: after the rest of this worker's stack, first to be stolen
  w->stack_len.store(w->stack.size(), std::memory_order_relaxed);
}

void Scheduler::push_global(ActorCell* cell) {
  {
    std::lock_guard lock(mu_);
    global_.push_back(cell);
    global_len_.fetch_add(1, std::memory_order_relaxed);
  }
  if (nobody_spinning() && sleeping_.load(std::memory_order_relaxed) > 0) wake_sleeper();
}

void Scheduler::push_global(const std::vector<ActorCell*>& cells) {
  {
    std::lock_guard lock(mu_);
    for (ActorCell* cell : cells) global_.push_back(cell);
    global_len_.fetch_add(cells.size(), std::memory_order_relaxed);
  }
  // One worker is enough to start: the one that wakes finds the rest queued, and a worker that
  // finds more than it runs wakes the next (see `schedule`).
  if (nobody_spinning() && sleeping_.load(std::memory_order_relaxed) > 0) wake_sleeper();
}

bool Scheduler::set_idle_waiter(IdleWaiter* waiter) {
  if (track_in_flight_ && waiter != nullptr) return false;
  // seq_cst, as in wait_in_waiter: either a worker's load sees the new pointer or this load sees
  // the worker counted.
  IdleWaiter* old = waiter_.exchange(waiter, std::memory_order_seq_cst);
  if (old == nullptr) return true;
  // From an event the waiter handles, this would wait for the caller itself.
  assert(!tls_in_waiter && "set_idle_waiter from inside the idle waiter");
  for (unsigned round = 0; waiter_users_.load(std::memory_order_seq_cst) != 0; ++round) {
    // A worker may have entered just after an interrupt was handled (by another thread): again.
    if (round % 1024 == 0) old->interrupt();
    std::this_thread::yield();
  }
  return true;
}

void Scheduler::begin_batch() {
  assert(tls_batch.owner == nullptr && "batches do not nest");
  // On a worker (an event handled in the idle waiter) woken actors go to its own stack.
  if (tls_worker != nullptr && tls_worker->owner == this) return;
  tls_batch.owner = this;
}

void Scheduler::flush_batch() {
  if (tls_batch.owner != this || tls_batch.cells.empty()) return;
  push_global(tls_batch.cells);
  tls_batch.cells.clear();
}

void Scheduler::end_batch() {
  flush_batch();
  if (tls_batch.owner == this) tls_batch.owner = nullptr;
}

void Scheduler::leave_flight() {
  if (!track_in_flight_) return;
  // Release: whatever the actor did is visible to a waiter that acquires the zero.
  if (in_flight_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::lock_guard lock(quiet_mu_);  // orders the notify after a waiter's check under quiet_mu_
  quiet_cv_.notify_all();
}

bool Scheduler::wait_quiescent(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(quiet_mu_);
  return quiet_cv_.wait_until(lock, deadline, [&] { return in_flight_.load(std::memory_order_acquire) == 0; });
}

void Scheduler::wake_sleeper() {
  std::lock_guard lock(mu_);
  wake_one_locked();
}

void Scheduler::wake_one_locked() {
  // A sleeper first: the worker in the waiter is the one that handles network events at once.
  if (cv_sleepers_ > 0) {
    cv_.notify_one();
  } else if (in_waiter_ != nullptr && !tls_in_waiter) {  // not the waiting worker itself
    in_waiter_->interrupt();                             // kept alive by that worker's count in waiter_users_
  }
}

bool Scheduler::wait_in_waiter(std::unique_lock<std::mutex>& lock) {
  if (in_waiter_ != nullptr) return false;
  waiter_users_.fetch_add(1, std::memory_order_seq_cst);
  IdleWaiter* waiter = waiter_.load(std::memory_order_seq_cst);
  if (waiter == nullptr) {
    waiter_users_.fetch_sub(1, std::memory_order_release);
    return false;
  }
  in_waiter_ = waiter;
  sleeping_.fetch_add(1, std::memory_order_relaxed);
  lock.unlock();
  tls_in_waiter = true;
  const bool waited = waiter->wait(std::chrono::milliseconds(1));
  tls_in_waiter = false;
  lock.lock();
  sleeping_.fetch_sub(1, std::memory_order_relaxed);
  in_waiter_ = nullptr;
  waiter_users_.fetch_sub(1, std::memory_order_release);
  return waited;
}

void Scheduler::worker_main(Worker& worker) {
  tls_worker = &worker;
  while (ActorCell* cell = next_cell(worker)) {
    tls_run_end.in_run = true;
    run_cell(cell);
    tls_run_end.in_run = false;
    // Out of the run: a flush that writes (and so registers nothing) cannot grow the list.
    for (const auto& target : tls_run_end.pending) target->flush_after_run();
    tls_run_end.pending.clear();
  }
  tls_worker = nullptr;
}

bool Scheduler::defer_to_run_end(std::shared_ptr<RunEndFlush> target) {
  if (!tls_run_end.in_run) return false;
  tls_run_end.pending.push_back(std::move(target));
  return true;
}

ActorCell* Scheduler::pop_global() {
  if (global_len_.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard lock(mu_);
  if (global_.empty()) return nullptr;
  global_len_.fetch_sub(1, std::memory_order_relaxed);
  ActorCell* cell = global_.pop_front();
  // More queued than this worker takes (a batch): pass the word on to a sleeper.
  if (!global_.empty() && nobody_spinning() && sleeping_.load(std::memory_order_relaxed) > 0) wake_one_locked();
  return cell;
}

ActorCell* Scheduler::steal(Worker& thief) {
  for (std::size_t i = 1; i < workers_.size(); ++i) {
    Worker& victim = *workers_[(thief.index + i) % workers_.size()];
    if (victim.stack_len.load(std::memory_order_relaxed) < 2) continue;
    // Take the older half in one go: one steal per actor would keep both workers fighting over
    // the victim's lock and cache lines.
    RingBuffer<ActorCell*> loot;
    {
      std::lock_guard lock(victim.mu);
      const std::size_t n = victim.stack.size() / 2;
      for (std::size_t k = 0; k < n; ++k) loot.push_back(victim.stack.pop_front());
      victim.stack_len.store(victim.stack.size(), std::memory_order_relaxed);
    }
    if (loot.empty()) continue;
    ActorCell* first = loot.pop_front();  // the oldest runs first, as it would have there
    if (!loot.empty()) {
      std::lock_guard lock(thief.mu);
      while (!loot.empty()) thief.stack.push_back(loot.pop_back());  // keep the next-oldest on top
      thief.stack_len.store(thief.stack.size(), std::memory_order_relaxed);
    }
    return first;
  }
  return nullptr;
}

ActorCell* Scheduler::find_work(Worker& w) {
  {
    std::lock_guard lock(w.mu);
    if (!w.stack.empty()) {
      // Newest first, but after a streak let the oldest (bottom) and the global queue have a turn.
      ActorCell* cell = nullptr;
      if (w.streak < kMaxLocalStreak) {
        ++w.streak;
        cell = w.stack.pop_back();
      } else if (global_len_.load(std::memory_order_relaxed) == 0) {
        w.streak = 0;
        cell = w.stack.pop_front();
      }
      if (cell != nullptr) {
        w.stack_len.store(w.stack.size(), std::memory_order_relaxed);
        return cell;
      }
    }
  }
  w.streak = 0;
  if (ActorCell* cell = pop_global()) return cell;
  return steal(w);
}

ActorCell* Scheduler::next_cell(Worker& w) {
  bool timed_out = false;  // the last sleep ended by its timeout, not by a wake-up
  for (;;) {
    if (stop_requested_.load(std::memory_order_relaxed)) return nullptr;
    if (ActorCell* cell = find_work(w)) return cell;
    // Waiting in the idle waiter comes before spinning: what a worker usually waits for there is
    // a network event, and the waiter handles it the moment it comes.
    if (waiter_.load(std::memory_order_relaxed) != nullptr) {
      std::unique_lock lock(mu_);
      if (stopping_) return nullptr;
      if (!global_.empty()) continue;
      if (wait_in_waiter(lock)) {
        timed_out = false;
        continue;
      }
    }
    // Spin (then yield) before sleeping: work usually arrives within microseconds between busy
    // actors, and a futex sleep + wake costs more than that on both sides.
    // Other workers' counters are read only every kPollEvery rounds: they are written on every
    // push and pop, and a tight loop of remote reads would keep stealing their cache lines.
    // Not after a sleep that timed out with nothing to do: nothing is arriving, and an idle
    // worker would otherwise spin and yield after every timeout, a thousand times a second (six
    // idle workers took 0.44 of a core that way on a 2-vCPU VM, 0.09 without).
    bool seen = false;
    const bool may_spin = !timed_out && spinning_.fetch_add(1, std::memory_order_relaxed) < max_spinning_;
    for (unsigned i = 0; may_spin && i < kSpinRounds && !seen; ++i) {
      if (i < kPauseRounds) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
      if (i % kPollEvery != 0) continue;
      seen = global_len_.load(std::memory_order_relaxed) != 0 || w.stack_len.load(std::memory_order_relaxed) != 0;
      for (std::size_t v = 0; v < workers_.size() && !seen; ++v) {
        seen = workers_[v]->stack_len.load(std::memory_order_relaxed) > 1;
      }
    }
    if (!timed_out) spinning_.fetch_sub(1, std::memory_order_relaxed);
    if (seen) continue;
    std::unique_lock lock(mu_);
    // Once stopping, actors still queued are abandoned: termination already gave up on them, and a
    // runaway actor must not keep the workers (and so the process) alive.
    if (stopping_) return nullptr;
    if (!global_.empty()) continue;
    sleeping_.fetch_add(1, std::memory_order_relaxed);
    ++cv_sleepers_;
    timed_out = cv_.wait_for(lock, std::chrono::milliseconds(1)) == std::cv_status::timeout;
    --cv_sleepers_;
    sleeping_.fetch_sub(1, std::memory_order_relaxed);
  }
}

namespace {

// Measures one run of an actor for `elfin_busy_time_seconds`, when its group is measured.
//
// The run ends when the worker lets go of the actor, and from then on another worker may run it:
// everything that touches the cell (finding this thread's series through its cache) happens
// before that, in `stop` (the worker still owns the actor) or `prepare_release` (just before the
// CAS that may release it); `released` then records into this thread's series without the cell.
class BusyTimer {
 public:
  explicit BusyTimer(ActorCell& cell)
      : telemetry_(cell.group().telemetry().active() ? &cell.group().telemetry() : nullptr), cell_(cell) {
    if (telemetry_ != nullptr) start_ = telemetry_stamp();
  }
  BusyTimer(const BusyTimer&) = delete;
  BusyTimer& operator=(const BusyTimer&) = delete;
  ~BusyTimer() { assert(telemetry_ == nullptr && "a run ended without recording its busy time"); }
  /// Records the run while the worker still owns the actor (before finish_actor, which can free
  /// the cell, or before requeueing it). `finished`: exec returned, which also ends the handling
  /// of its last message.
  void stop(bool finished) {
    if (telemetry_ != nullptr) telemetry_->end_run(cell_, start_, finished);
    telemetry_ = nullptr;
  }
  /// Before a CAS that may release the actor: the series the run goes to.
  void prepare_release() {
    if (telemetry_ != nullptr) series_ = &telemetry_->series(cell_);
  }
  /// After that CAS released the actor: records the run without touching the cell.
  void released() {
    if (series_ != nullptr) series_->busy.record_ns(telemetry_elapsed_ns(start_, telemetry_stamp()));
    telemetry_ = nullptr;
  }

 private:
  GroupTelemetry* telemetry_;
  ActorCell& cell_;
  GroupSeries* series_ = nullptr;
  TelemetryStamp start_ = 0;
};

}  // namespace

void Scheduler::run_cell(ActorCell* cell) {
  // We dequeued the cell, so we are the only thread that may move it out of Scheduled; the queue's
  // lock orders this after everything the scheduling thread wrote. Acquire: a sender that notified
  // the actor while it was queued did so with an RMW this exchange reads from (ActorCell::notify),
  // so the poll below sees what it queued.
  [[maybe_unused]] const SchedState was = cell->sched_.exchange(SchedState::Running, std::memory_order_acq_rel);
  assert(was == SchedState::Scheduled && "an actor was queued twice");
  assert(cell->resume_point_ && "a queued actor has nowhere to resume");
  cell->budget_ = ActorCell::kRecvBudget;
  restart_send_sampling();
  CurrentActorScope current(cell);
  BusyTimer busy(*cell);
  for (unsigned polls = 0;; ++polls) {
    // Checked before every poll: a kill that arrives while the actor runs makes its notify fail
    // the CAS to Idle below, so the actor is ended at the suspension it just reached.
    if (cell->kill_requested()) {
      busy.stop(true);
      end_killed(*cell);
      leave_flight();
      return;
    }
    if (cell->poll_fn_ == nullptr || cell->poll_fn_(cell->poll_arg_)) {
      cell->poll_fn_ = nullptr;
      std::exchange(cell->resume_point_, {}).resume();
      if (cell->task_.done()) {
        busy.stop(true);
        finish_actor(*cell);
        leave_flight();
        return;
      }
      if (std::exchange(cell->yield_requested_, false)) {
        busy.stop(false);
        cell->sched_.store(SchedState::Scheduled, std::memory_order_release);
        requeue_behind(cell);
        return;
      }
    }
    SchedState expected = SchedState::Running;
    busy.prepare_release();
    if (cell->sched_.compare_exchange_strong(expected, SchedState::Idle, std::memory_order_acq_rel)) {
      busy.released();
      leave_flight();
      return;
    }
    // Notified while running: poll again, unless this actor keeps being woken for nothing.
    if (polls >= kMaxRepolls) {
      busy.stop(false);
      cell->sched_.store(SchedState::Scheduled, std::memory_order_release);
      push_global(cell);
      return;
    }
    // An RMW, not a store: a sender notifying meanwhile either is read from here (and its message
    // is visible to the poll) or finds Running and marks the actor again (ActorCell::notify).
    cell->sched_.exchange(SchedState::Running, std::memory_order_acq_rel);
  }
}

}  // namespace elfin::detail
