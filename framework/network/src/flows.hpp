// Flows: the credit each forwarder has on a connection (sender side) and the acknowledgements a
// receiver owes (receiver side).
//
// Sender: a TxFlow starts with kFlowWindow credits; each message takes one; Credit frames give
// them back. A forwarder without credit parks (CreditAwaitable) until credit arrives or the
// connection closes; so do the Callers sharing a connection's callers' flow, several at once.
//
// Receiver: a message counts as delivered once it sits in a local mailbox (or could not be
// delivered at all: undecodable, no such group). Delivered messages are acknowledged in batches of
// half a window, so Credit frames stay rare. Messages that met a full mailbox wait in the RxFlow's
// queue, in order, for its pusher actor, which takes the whole queue at once and delivers it;
// while the queue is not empty or the pusher holds deliveries, later messages of the flow queue
// behind them (per-sender FIFO holds across the network).
//
// Thread safety ("the I/O thread": whichever thread runs the event loop, see reactor.hpp): TxFlow
// from the forwarder and the I/O thread; RxFlow from the I/O thread and its pusher; both lock
// internally.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <elfin/detail/request_state.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/detail/waker.hpp>
#include <elfin/network/network.hpp>

namespace elfin::network::detail {

class TxFlow {
 public:
  explicit TxFlow(std::uint32_t id) : id_(id) {}
  [[nodiscard]] std::uint32_t id() const { return id_; }

  /// Takes one credit if there is one.
  [[nodiscard]] bool try_acquire() {
    std::int64_t credit = credit_.load(std::memory_order_seq_cst);
    while (credit > 0) {
      if (credit_.compare_exchange_weak(credit, credit - 1, std::memory_order_seq_cst)) return true;
    }
    return false;
  }
  /// Parks `waker` until credit arrives or the flow closes; every parked waker is woken then. No
  /// wakeup is lost: the forwarder stores its waker, then re-checks the credit (see
  /// CreditAwaitable); `grant` adds credit first and then takes the wakers under the same lock,
  /// so either the re-check sees the credit or `grant` sees the waker. Both sides use seq_cst on
  /// the counter.
  void park(elfin::detail::Waker waker) {
    std::lock_guard lock(mu_);
    for (const auto& parked : wakers_) {
      if (parked.cell() == waker.cell()) return;  // one wake per actor is enough
    }
    wakers_.push_back(std::move(waker));
  }
  void grant(std::uint32_t delta) {
    credit_.fetch_add(delta, std::memory_order_seq_cst);
    wake();
  }
  void close() {
    closed_.store(true, std::memory_order_seq_cst);
    wake();
  }
  [[nodiscard]] bool closed() const { return closed_.load(std::memory_order_seq_cst); }

 private:
  void wake() {
    std::vector<elfin::detail::Waker> wakers;
    {
      std::lock_guard lock(mu_);
      wakers.swap(wakers_);
    }
    for (const auto& waker : wakers) waker.wake();
  }
  const std::uint32_t id_;
  std::atomic<std::int64_t> credit_{kFlowWindow};
  std::atomic<bool> closed_{false};
  std::mutex mu_;
  std::vector<elfin::detail::Waker> wakers_;  // guarded by mu_
};

/// A delivery that met a full mailbox: the rest of the send, and the request state to release
/// once it is done (remote requests only).
struct BlockedDelivery {
  elfin::detail::SendOp op;
  std::shared_ptr<elfin::detail::RequestStateBase> request;
};

class RxFlow {
 public:
  /// `send_credit` returns credit to the sender (it must not call back into the flow).
  RxFlow(std::uint32_t id, std::uint64_t pusher_key, std::function<void(std::uint32_t)> send_credit)
      : id_(id), pusher_key_(pusher_key), send_credit_(std::move(send_credit)) {}
  [[nodiscard]] std::uint32_t id() const { return id_; }
  [[nodiscard]] std::uint64_t pusher_key() const { return pusher_key_; }

  /// Delivers now unless earlier messages of the flow wait; returns true if the pusher must be
  /// woken (the queue was empty and now holds this delivery). Also while the pusher is at work:
  /// it then finds the delivery with its next `take` anyway, and one spare wake costs less than a
  /// flow that nobody drains should the pusher be gone (it is restarted with its group).
  template <class Deliver>
  [[nodiscard]] bool deliver_in_order(BlockedDelivery delivery, Deliver&& try_now) {
    std::lock_guard lock(mu_);
    if (queue_.empty() && !draining_ && try_now(delivery)) return false;
    queue_.push_back(std::move(delivery));
    return queue_.size() == 1;
  }
  /// The pusher takes everything queued into `into` (empty: nothing is left and the pusher is
  /// done). While the pusher holds deliveries, later messages queue behind them.
  void take(std::deque<BlockedDelivery>& into) {
    std::lock_guard lock(mu_);
    into.swap(queue_);
    draining_ = !into.empty();
  }
  /// Counts `n` handled messages and returns credit to the sender once half a window is due.
  void delivered(std::uint32_t n) {
    std::uint32_t due = 0;
    {
      std::lock_guard lock(mu_);
      unacked_ += n;
      if (unacked_ >= kFlowWindow / 2) due = std::exchange(unacked_, 0);
    }
    if (due > 0) send_credit_(due);
  }

 private:
  const std::uint32_t id_;
  const std::uint64_t pusher_key_;
  const std::function<void(std::uint32_t)> send_credit_;
  std::mutex mu_;
  std::deque<BlockedDelivery> queue_;  // guarded by mu_
  bool draining_ = false;              // guarded by mu_; the pusher holds taken deliveries
  std::uint32_t unacked_ = 0;          // guarded by mu_
};

}  // namespace elfin::network::detail
