// Mailbox: the bounded multi-producer, single-consumer queue of one actor.
//
// Internal to the runtime: an ActorCell keeps its mailbox inline, but only the runtime sees its type.
//
// Producers append under a short spin lock (elfin/detail/spin_lock.hpp: it yields the thread after
// a few dozen spins, for a preempted holder); the consumer swaps the whole shared buffer for its
// own drained one in one locked step and then pops without locking. A std::mutex here parked
// contending threads in futex calls (about one per four messages of a 2→1 stream) and cost 7–20%
// on the 1→1, ping-pong and fan-out benchmarks; the network's figures, with a second process on
// the same cores, did not move (tests/bench/README.md, "The mailbox lock is a spin lock").
// Because every append is ordered by the lock, the queue is linearizable, so two messages from one
// sender arrive in the order they were sent even when the sending actor resumed on another thread
// between the two sends (moodycamel's queue only orders per producing *thread*, which is why it is
// not used here).
//
// Capacity counts messages in both buffers (`len_`). A bounded push that finds the mailbox full
// can register a waker, which the consumer wakes when it frees a slot; see `pop` for the argument
// that no wakeup is lost.
//
// Thread safety: `push`, `close`, `set_capacity` from any thread; `pop` only from the consumer.
#pragma once

#include <atomic>
#include <cstddef>
#include <new>
#include <vector>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/pop_result.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/detail/waker.hpp>
#include <elfin/envelope.hpp>
#include <elfin/internal/ring_buffer.hpp>

namespace elfin::detail {

class Mailbox {
 public:
  static constexpr std::size_t kDefaultCapacity = 100;

  enum class PushResult : unsigned char { Ok, Full, Closed };
  using PopResult = detail::PopResult;

  explicit Mailbox(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  /// Appends `envelope`. A bounded push fails with Full at capacity; then, if `waiter` is set, it is
  /// registered (atomically with the check) to be woken when a slot frees or the mailbox closes.
  PushResult push(Envelope& envelope, bool bounded, ActorCell* waiter = nullptr);

  /// Takes the oldest message. Empty/Closed only when nothing is left; Closed after `close`.
  PopResult pop(Envelope& out);

  /// Refuses further pushes; already queued messages are still delivered. False if already closed.
  bool close();
  /// Accepts pushes again after `close` (a restarting actor's mailbox, for its successor).
  void reopen();
  /// Removes every queued message (used once the consumer is gone).
  std::vector<Envelope> drain();

  void set_capacity(std::size_t capacity);
  [[nodiscard]] std::size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t size() const { return len_.load(std::memory_order_relaxed); }

 private:
  void wake_one_waiter();

  SpinLock mu_;
  RingBuffer<Envelope> shared_;  // guarded by mu_
  std::vector<Waker> waiters_;   // guarded by mu_; a vector allocates nothing until used
  bool closed_ = false;          // guarded by mu_
  RingBuffer<Envelope> local_;   // consumer only
  std::atomic<std::size_t> len_{0};
  std::atomic<std::size_t> capacity_;
  std::atomic<bool> has_waiters_{false};
};

inline Mailbox& ActorCell::mailbox() { return *std::launder(reinterpret_cast<Mailbox*>(mailbox_)); }

}  // namespace elfin::detail
