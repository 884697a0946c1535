// IoThread: the thread that does a WAL actor's blocking file work (recovery, write + fdatasync,
// reads, retirement), so that no actor worker ever waits for the disk.
//
// The actor posts jobs; each job runs on this thread and returns a completion, which the actor
// runs on its own thread when it drains them. Both directions are moodycamel queues, so posting
// and completing take no lock:
//   jobs         the actor is the only producer, through one ProducerToken: moodycamel keeps
//                FIFO order per producer, and the actor's turns on different workers are ordered
//                by the runtime's scheduling (acq_rel on the cell's state), so jobs run in the
//                order they were posted even when the actor migrates between workers;
//   completions  this thread is the only producer, the actor the only consumer: FIFO.
// After queueing a completion the thread calls `notify` only if no notification is pending
// (`notified_` false -> true). The actor clears the flag (exchange, acq_rel) before it drains,
// so a completion queued after its drain began either is seen by that drain or finds the flag
// clear and notifies again: none is stranded. Exercised under TSan by tests/unit/wal_actors.
//
// Thread safety: `post`, `drain` and the destructor from the owning actor only; `notify` is
// called on this thread.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include <concurrentqueue/blockingconcurrentqueue.h>
#include <concurrentqueue/concurrentqueue.h>

namespace elfin::actors::wal::internal {

class IoThread {
 public:
  using Completion = std::function<void()>;
  using Job = std::function<Completion()>;

  /// `notify` tells the actor that completions are waiting (it sends the actor a message).
  explicit IoThread(std::function<void()> notify);
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;
  /// Runs the jobs already posted, then stops the thread and joins it (the actor's worker waits:
  /// only when an actor ends with work in flight, e.g. forced closing).
  ~IoThread();

  void post(Job job);
  /// Runs the completions queued so far; returns how many.
  std::size_t drain();
  /// Stops after the posted jobs and waits for the thread (see the destructor).
  void stop();

 private:
  void run();

  std::function<void()> notify_;
  moodycamel::BlockingConcurrentQueue<Job> jobs_;
  moodycamel::ProducerToken token_;
  moodycamel::ConcurrentQueue<Completion> completions_;
  std::atomic<bool> notified_{false};
  std::thread thread_;
};

}  // namespace elfin::actors::wal::internal
