#include <elfin/internal/mailbox.hpp>

#include <algorithm>
#include <mutex>

#include <elfin/detail/actor_cell.hpp>

namespace elfin::detail {

// No lost wakeup between a producer that finds the mailbox full and the consumer that frees a
// slot. Producer (under mu_): registers its waker, stores has_waiters_ = true (seq_cst), re-reads
// len_ (seq_cst). Consumer (no lock): decrements len_ (seq_cst), then reads has_waiters_ (seq_cst).
// In the single total order of these seq_cst operations either the consumer's decrement comes
// before the producer's re-read (the producer sees room and pushes itself), or the producer's
// store comes before the consumer's read (the consumer sees a waiter and wakes it).
Mailbox::PushResult Mailbox::push(Envelope& envelope, bool bounded, ActorCell* waiter) {
  std::lock_guard lock(mu_);
  if (closed_) return PushResult::Closed;
  const std::size_t cap = capacity_.load(std::memory_order_relaxed);
  if (bounded && len_.load(std::memory_order_relaxed) >= cap) {
    if (waiter == nullptr) return PushResult::Full;
    bool registered = std::any_of(waiters_.begin(), waiters_.end(), [&](const Waker& w) { return w.cell() == waiter; });
    if (!registered) waiters_.emplace_back(waiter->shared_from_this());
    has_waiters_.store(true, std::memory_order_seq_cst);
    if (len_.load(std::memory_order_seq_cst) >= cap) return PushResult::Full;
    if (!registered) waiters_.pop_back();
    if (waiters_.empty()) has_waiters_.store(false, std::memory_order_relaxed);
  }
  shared_.push_back(std::move(envelope));
  len_.fetch_add(1, std::memory_order_relaxed);
  return PushResult::Ok;
}

Mailbox::PopResult Mailbox::pop(Envelope& out) {
  if (local_.empty()) {
    std::lock_guard lock(mu_);
    if (shared_.empty()) return closed_ ? PopResult::Closed : PopResult::Empty;
    local_.swap(shared_);
  }
  out = local_.pop_front();
  len_.fetch_sub(1, std::memory_order_seq_cst);
  if (has_waiters_.load(std::memory_order_seq_cst)) wake_one_waiter();
  return PopResult::Item;
}

void Mailbox::wake_one_waiter() {
  Waker waker;
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) return;
    waker = std::move(waiters_.front());
    waiters_.erase(waiters_.begin());  // FIFO among waiters; the list is short
    if (waiters_.empty()) has_waiters_.store(false, std::memory_order_relaxed);
  }
  waker.wake();
}

bool Mailbox::close() {
  std::vector<Waker> waiters;
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    closed_ = true;
    waiters.swap(waiters_);
    has_waiters_.store(false, std::memory_order_relaxed);
  }
  for (auto& w : waiters) w.wake();  // they will find the mailbox closed
  return true;
}

void Mailbox::reopen() {
  std::lock_guard lock(mu_);
  closed_ = false;
}

std::vector<Envelope> Mailbox::drain() {
  std::vector<Envelope> out;
  RingBuffer<Envelope> rest;
  {
    std::lock_guard lock(mu_);
    rest.swap(shared_);
  }
  while (!local_.empty()) out.push_back(local_.pop_front());
  while (!rest.empty()) out.push_back(rest.pop_front());
  len_.fetch_sub(out.size(), std::memory_order_relaxed);
  return out;
}

void Mailbox::set_capacity(std::size_t capacity) {
  const std::size_t old = capacity_.exchange(capacity, std::memory_order_relaxed);
  if (capacity <= old) return;
  std::vector<Waker> waiters;
  {
    std::lock_guard lock(mu_);
    waiters.swap(waiters_);
    has_waiters_.store(false, std::memory_order_relaxed);
  }
  for (auto& w : waiters) w.wake();  // there may be room for them now
}

}  // namespace elfin::detail
