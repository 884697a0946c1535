#include "io_thread.hpp"

#include <utility>

namespace elfin::actors::wal::internal {

IoThread::IoThread(std::function<void()> notify)
    : notify_(std::move(notify)), token_(jobs_), thread_([this] { run(); }) {}

IoThread::~IoThread() { stop(); }

void IoThread::post(Job job) { jobs_.enqueue(token_, std::move(job)); }

void IoThread::stop() {
  if (!thread_.joinable()) return;
  jobs_.enqueue(token_, Job{});  // an empty job: stop once everything before it ran
  thread_.join();
}

std::size_t IoThread::drain() {
  notified_.exchange(false, std::memory_order_acq_rel);
  std::size_t n = 0;
  Completion completion;
  while (completions_.try_dequeue(completion)) {
    completion();
    ++n;
  }
  return n;
}

void IoThread::run() {
  Job job;
  for (;;) {
    jobs_.wait_dequeue(job);
    if (!job) return;
    completions_.enqueue(job());
    job = nullptr;  // its captures (the batch's records) go before the actor is told
    if (!notified_.exchange(true, std::memory_order_acq_rel)) notify_();
  }
}

}  // namespace elfin::actors::wal::internal
