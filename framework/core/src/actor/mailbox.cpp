#include <elfin/internal/mailbox.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>
#include <thread>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/block_pool.hpp>

namespace elfin::detail {

// Why the mailbox is correct without a lock.
//
// The list (Vyukov's intrusive MPSC queue). `head_` is the newest node, `tail_` the consumer's
// oldest, `stub_` a node that keeps the list non-empty. Push: node->next = null, then
// prev = head_.exchange(node) (acq_rel), then prev->next.store(node) (release). Pop: read
// tail_->next (acquire); a non-null next means tail_ is complete and can be handed out. The
// release store of `next` / acquire load pair makes everything the producer wrote into the node
// and the message visible to the consumer. Between a producer's exchange and its store the list
// is cut: the consumer sees no next, finds head_ != tail_ and reports Empty; the producer notifies
// the actor right after its store, so the actor looks again. That notification is an RMW of the
// actor's scheduling state even when the actor is already marked to poll again, and the worker
// resets the mark with an RMW before it polls (ActorCell::notify, Scheduler::run_cell): a poll that
// follows the reset sees every message whose notification came before it.
//
// Order. The exchanges on head_ form one modification order, and the list's order is that order.
// Two pushes by one sender are sequenced (or, when the sending actor moved to another worker in
// between, ordered by the scheduler's synchronization), so the first exchange is earlier in the
// modification order: each sender's messages stay in order.
//
// The bound. `state_` holds kClosed | count, where count is the number of messages queued or
// reserved. A bounded push reserves with a CAS from `count` to `count + 1` that it only attempts
// when count < capacity and the closed bit is clear; the consumer subtracts one after each pop.
// Every successful reservation is one step of state_'s modification order that leaves count <=
// capacity, so at no moment are more than `capacity` messages queued or in flight, however many
// producers race (the check and the increment are one atomic step). Unbounded pushes (the runtime's
// own messages, `unbounded_send`) take the same CAS without the capacity check and may exceed it,
// as may what was queued before `set_capacity` lowered it; bounded pushes then wait until the
// count is below the capacity again.
//
// Waiting senders (no lost wakeup). A bounded push that finds the mailbox full, with a waiter:
// under waiters_mu_ it registers the waiter, stores has_waiters_ = true (seq_cst) and re-reads
// state_ (seq_cst). The consumer does not wake a waiter at every pop: woken one per freed slot,
// every message of a saturated many-to-one stream paid for a wake-up, a schedule and a
// re-registration of its sender. It looks for waiters at two points of the count's way down: when
// a pop leaves the mark (half the capacity, rounded down), it wakes as many as there are free
// slots then (capacity - mark), the longest waiting first; when a pop leaves zero, as many as
// were freed since (mark). A woken sender finds several slots free and sends until the mailbox is
// full again. (With a capacity of 1 the mark is zero and every pop wakes one; with 2, the same.)
//
// No waiter is lost: a registering producer re-read a count at or above the capacity, above the
// mark; pops take one at a time, so a later pop leaves exactly the mark, and that decrement is
// later in state_'s modification order than the value the producer read. In the single total order
// of seq_cst operations the producer's store to has_waiters_ therefore precedes it, and the
// consumer's load after it sees the waiter. (Or the producer's re-read saw room already, and it
// retries at once.) Waiters beyond the free slots stay registered: the ones woken fill the mailbox
// again, so the count comes down through the mark again, or nobody refills it and the pop that
// empties it wakes the next ones. A woken sender that loses the race for a slot finds the mailbox
// full again and registers again; the consumer has messages to pop and will come through the mark.
// Lowering the capacity moves the mark, which the count still comes down to; raising it (and
// closing) wakes every waiter.
//
// Close. `close` sets kClosed with a seq_cst RMW on state_. A reservation is an RMW on the same
// atomic, so it either precedes the close (its message is delivered: pop reports Closed only once
// count is zero, that is after that message was popped) or follows it and fails. `drain` (after
// close) therefore waits until count reaches zero: the producers still linking have already
// reserved and link within a few instructions. Waiters registered before the close are woken by
// it; one registering after it re-reads state_ under waiters_mu_, which the close's hand-over of
// the waiter list also takes, and sees the closed bit.

namespace {

/// Queues a block that other mailboxes share: the block's own link can be in one list only.
/// A multicast queues one per recipient, and the recipients free them on their own workers: from
/// the block pool, whose depot carries what one thread frees to the thread that multicasts next
/// (a per-thread free list alone would run dry on the sender's side and overflow on the others').
struct MailboxNode final : MailboxLink {
  EnvelopeBlock* block = nullptr;

  static void* operator new(std::size_t size) { return allocate_block(size); }
  static void operator delete(void* node, std::size_t size) noexcept { free_block(node, size); }
};

}  // namespace

Mailbox::~Mailbox() {
  // Nobody can push any more (nobody holds the cell); dropped envelopes settle their obligations.
  while (MailboxLink* node = unlink()) std::ignore = envelope_of(node);
}

Mailbox::PushResult Mailbox::reserve(bool bounded, ActorCell* waiter) {
  std::uint64_t s = state_.load(std::memory_order_relaxed);
  for (;;) {
    if ((s & kClosed) != 0) return PushResult::Closed;
    if (bounded && (s & kCountMask) >= capacity_.load(std::memory_order_relaxed)) {
      if (waiter == nullptr) return PushResult::Full;
      if (auto r = wait_for_room(waiter); r != PushResult::Ok) return r;
      s = state_.load(std::memory_order_relaxed);
      continue;
    }
    if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      return PushResult::Ok;
    }
  }
}

Mailbox::PushResult Mailbox::wait_for_room(ActorCell* waiter) {
  std::lock_guard lock(waiters_mu_);
  const bool registered =
      std::any_of(waiters_.begin(), waiters_.end(), [&](const Waker& w) { return w.cell() == waiter; });
  if (!registered) waiters_.emplace_back(waiter->shared_from_this());
  has_waiters_.store(true, std::memory_order_seq_cst);
  const std::uint64_t s = state_.load(std::memory_order_seq_cst);
  const bool closed = (s & kClosed) != 0;
  if (!closed && (s & kCountMask) >= capacity_.load(std::memory_order_relaxed)) return PushResult::Full;
  // Room after all (or closed): this push goes on now, so it waits for nothing.
  if (!registered) waiters_.pop_back();
  if (waiters_.empty()) has_waiters_.store(false, std::memory_order_relaxed);
  return closed ? PushResult::Closed : PushResult::Ok;
}

void Mailbox::link(MailboxLink* node) {
  node->next.store(nullptr, std::memory_order_relaxed);
  MailboxLink* prev = head_.exchange(node, std::memory_order_acq_rel);
  prev->next.store(node, std::memory_order_release);
}

Mailbox::PushResult Mailbox::push(Envelope& envelope, bool bounded, ActorCell* waiter) {
  if (auto r = reserve(bounded, waiter); r != PushResult::Ok) return r;
  EnvelopeBlock* block = EnvelopeAccess::block(envelope);
  const std::uint8_t flags = EnvelopeAccess::flags(envelope);
  MailboxLink* node = block;
  // Acquire: a handle released on another thread is done with the block before we reuse its link.
  // A count of 1 cannot grow meanwhile: this handle is the only one that could share the block.
  if (block->refs.load(std::memory_order_acquire) != 1) {
    auto* shared = new MailboxNode;
    shared->is_node = true;
    shared->block = block;
    node = shared;
  }
  node->flags = flags;
  std::ignore = EnvelopeAccess::release_to_queue(envelope);
  link(node);
  return PushResult::Ok;
}

MailboxLink* Mailbox::unlink() {
  MailboxLink* tail = tail_;
  MailboxLink* next = tail->next.load(std::memory_order_acquire);
  if (tail == &stub_) {
    if (next == nullptr) return nullptr;
    tail_ = next;
    tail = next;
    next = next->next.load(std::memory_order_acquire);
  }
  if (next != nullptr) {
    tail_ = next;
    return tail;
  }
  // `tail` is the newest node we can see: it can be handed out only once something follows it.
  if (tail != head_.load(std::memory_order_acquire)) return nullptr;  // a producer is linking
  link(&stub_);
  next = tail->next.load(std::memory_order_acquire);
  if (next == nullptr) return nullptr;  // a producer got in between; its link comes
  tail_ = next;
  return tail;
}

Envelope Mailbox::envelope_of(MailboxLink* node) {
  EnvelopeBlock* block;
  if (node->is_node) {
    auto* shared = static_cast<MailboxNode*>(node);
    block = shared->block;
    const std::uint8_t flags = shared->flags;
    delete shared;
    return EnvelopeAccess::adopt(block, flags);
  }
  block = static_cast<EnvelopeBlock*>(node);
  return EnvelopeAccess::adopt(block, node->flags);
}

Mailbox::PopResult Mailbox::pop(Envelope& out) {
  MailboxLink* node = unlink();
  if (node == nullptr) {
    const std::uint64_t s = state_.load(std::memory_order_acquire);
    return (s & kClosed) != 0 && (s & kCountMask) == 0 ? PopResult::Closed : PopResult::Empty;
  }
  out = envelope_of(node);
  const std::uint64_t before = state_.fetch_sub(1, std::memory_order_seq_cst);
  if (has_waiters_.load(std::memory_order_seq_cst)) wake_waiters_at((before - 1) & kCountMask);
  return PopResult::Item;
}

void Mailbox::wake_waiters_at(std::uint64_t left) {
  // Waiters are woken at two points of the count's way down (see the top of this file): at the
  // mark, as many as there are free slots then, and at zero, as many as were freed since.
  const std::size_t capacity = capacity_.load(std::memory_order_relaxed);
  const std::size_t mark = capacity / 2;
  if (left == mark) {
    wake_waiters(capacity - mark);
  } else if (left == 0) {
    wake_waiters(mark);
  }
}

void Mailbox::wake_waiters(std::size_t room) {
  // In batches: the wakers are moved out under the lock and woken after it.
  constexpr std::size_t kBatch = 8;
  std::array<Waker, kBatch> woken;
  while (room > 0) {
    std::size_t n = 0;
    bool more = false;
    {
      std::lock_guard lock(waiters_mu_);
      n = std::min({room, waiters_.size(), kBatch});
      const auto end = waiters_.begin() + static_cast<std::ptrdiff_t>(n);
      std::move(waiters_.begin(), end, woken.begin());
      waiters_.erase(waiters_.begin(), end);  // FIFO among waiters
      more = !waiters_.empty();
      if (!more) has_waiters_.store(false, std::memory_order_relaxed);
    }
    room -= n;
    for (std::size_t i = 0; i < n; ++i) {
      woken[i].wake();
      woken[i].reset();
    }
    if (!more) return;
  }
}

bool Mailbox::close() {
  if ((state_.fetch_or(kClosed, std::memory_order_seq_cst) & kClosed) != 0) return false;
  std::vector<Waker> waiters;
  {
    std::lock_guard lock(waiters_mu_);
    waiters.swap(waiters_);
    has_waiters_.store(false, std::memory_order_relaxed);
  }
  for (auto& w : waiters) w.wake();  // they will find the mailbox closed
  return true;
}

void Mailbox::reopen() { state_.fetch_and(~kClosed, std::memory_order_seq_cst); }

std::vector<Envelope> Mailbox::drain() {
  std::vector<Envelope> out;
  for (;;) {
    while (MailboxLink* node = unlink()) out.push_back(envelope_of(node));
    const std::uint64_t s = state_.load(std::memory_order_acquire);
    if ((s & kCountMask) == out.size()) break;
    // A producer reserved before the close and is between its exchange and its link.
    std::this_thread::yield();
  }
  state_.fetch_sub(out.size(), std::memory_order_seq_cst);
  return out;
}

void Mailbox::set_capacity(std::size_t capacity) {
  const std::size_t old = capacity_.exchange(capacity, std::memory_order_relaxed);
  if (capacity <= old) return;
  std::vector<Waker> waiters;
  {
    std::lock_guard lock(waiters_mu_);
    waiters.swap(waiters_);
    has_waiters_.store(false, std::memory_order_relaxed);
  }
  for (auto& w : waiters) w.wake();  // there may be room for them now
}

}  // namespace elfin::detail
