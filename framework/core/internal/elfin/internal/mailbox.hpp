// Mailbox: the bounded multi-producer, single-consumer queue of one actor.
//
// Internal to the runtime: an ActorCell keeps its mailbox inline, but only the runtime sees its type.
//
// The queue is an intrusive linked list in the style of Vyukov's MPSC node queue: a producer links
// its message with one atomic exchange of the list's head and one store into the previous node;
// the consumer walks the list from its own end without any read-modify-write. No producer ever
// waits for another (no lock), and two producers touch only the head and the counter below.
// The exchange is the push's linearization point, so pushes are ordered as they happened: two
// messages from one sender arrive in the order they were sent even when the sending actor resumed
// on another thread between the two sends (its second exchange happens after its first). That is
// why moodycamel's concurrentqueue, which only orders per producing *thread*, is not used here.
//
// A message sent to one actor is linked through the MailboxLink inside its envelope block (no
// allocation); a block that several mailboxes share (a multicast) goes in through a small node.
//
// Bounded without a lock: `state_` packs the count of messages (queued, or reserved by a producer
// that has not linked its message yet) with a "closed" bit. A producer reserves its place with a
// compare-and-swap that fails when the mailbox is closed or, for a bounded push, full; the
// consumer decrements the count after each pop. See mailbox.cpp for the argument that the bound
// holds, that no waiting sender's wakeup is lost and that close/drain lose nothing.
//
// Thread safety: `push`, `close`, `reopen`, `set_capacity`, `size` from any thread; `pop` and
// `drain` only from the consumer (or once the consumer is gone).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/pop_result.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/detail/waker.hpp>
#include <elfin/envelope.hpp>

namespace elfin::detail {

class Mailbox {
 public:
  static constexpr std::size_t kDefaultCapacity = 100;

  enum class PushResult : unsigned char { Ok, Full, Closed };
  using PopResult = detail::PopResult;

  explicit Mailbox(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;
  ~Mailbox();

  /// Appends `envelope` (moved from on Ok only). A bounded push fails with Full at capacity; then,
  /// if `waiter` is set, it is registered (atomically with the check) to be woken when a slot
  /// frees or the mailbox closes.
  PushResult push(Envelope& envelope, bool bounded, ActorCell* waiter = nullptr);

  /// Takes the oldest message. Empty/Closed only when nothing is left; Closed after `close`.
  /// Empty may also mean that a producer is between its reservation and its link: it notifies
  /// the actor once the message is in.
  PopResult pop(Envelope& out);

  /// Refuses further pushes; already queued messages are still delivered. False if already closed.
  bool close();
  /// Accepts pushes again after `close` (a restarting actor's mailbox, for its successor).
  void reopen();
  /// After `close`: removes every queued message, waiting for producers that reserved a place
  /// before the close to link theirs (used once the consumer is gone).
  std::vector<Envelope> drain();

  void set_capacity(std::size_t capacity);
  [[nodiscard]] std::size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  /// Messages queued, plus those reserved and being linked.
  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(state_.load(std::memory_order_relaxed) & kCountMask);
  }

 private:
  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kCountMask = kClosed - 1;

  /// Reserves a place: Ok, or why not (may register `waiter`).
  PushResult reserve(bool bounded, ActorCell* waiter);
  /// The slow path of a bounded reservation that found the mailbox full.
  PushResult wait_for_room(ActorCell* waiter);
  void link(MailboxLink* node);
  /// The oldest linked node, or null (empty, or its producer has not linked it yet).
  MailboxLink* unlink();
  static Envelope envelope_of(MailboxLink* node);
  /// After a pop that left `left` messages, with waiters: wakes those due at that count.
  void wake_waiters_at(std::uint64_t left);
  /// Wakes up to `room` waiters, the longest waiting first.
  void wake_waiters(std::size_t room);

  // Producers' side: every push writes these.
  std::atomic<MailboxLink*> head_{&stub_};
  std::atomic<std::uint64_t> state_{0};  ///< kClosed | number of messages queued or reserved
  std::atomic<std::size_t> capacity_;
  std::atomic<bool> has_waiters_{false};
  SpinLock waiters_mu_;
  std::vector<Waker> waiters_;  // guarded by waiters_mu_; a vector allocates nothing until used

  // A cache line of space between the two sides keeps them off each other's lines wherever the
  // mailbox starts, without asking its cell for 64-byte alignment (an over-aligned allocation
  // takes glibc's memalign path, several times the cost of a plain one, on every spawn).
  [[maybe_unused]] std::byte separator_[kCacheLine];

  // Consumer's side: producers never write it (except linking the stub).
  MailboxLink* tail_ = &stub_;
  MailboxLink stub_;
};

inline Mailbox& ActorCell::mailbox() { return *std::launder(reinterpret_cast<Mailbox*>(mailbox_)); }

}  // namespace elfin::detail
