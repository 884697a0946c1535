// The mailbox's queue on its own, with plain threads as producers: per-sender FIFO when a sender's
// pushes come from different threads, the capacity bound under a flood from many producers, and
// what closing and draining do with messages in flight. (The actor-level behaviour — waiting
// sends, Full, Closed — is in mailbox.test.cpp.)
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/internal/mailbox.hpp>

#include "test_protocol.hpp"

using namespace elfin;
using elfin::detail::Mailbox;
using elfin::test::Numbered;

namespace {

Envelope numbered(std::uint32_t sender, std::uint64_t seq) {
  return Envelope::make(Numbered{sender, seq}, Addr{}, TraceId{});
}

/// Pushes (bounded, no waiter) until there is room; false if the mailbox is closed.
bool push_until_room(Mailbox& mailbox, Envelope envelope) {
  for (;;) {
    switch (mailbox.push(envelope, true)) {
      case Mailbox::PushResult::Ok:
        return true;
      case Mailbox::PushResult::Closed:
        return false;
      case Mailbox::PushResult::Full:
        std::this_thread::yield();
        break;
    }
  }
}

}  // namespace

TEST_CASE("mailbox queue: each sender's messages stay in order while the sender hops between threads",
          "[core][mailbox]") {
  // Logical senders are handed from thread to thread through a locked queue (as the scheduler
  // hands an actor between workers): a thread takes one, pushes a burst of its numbered messages,
  // and puts it back for any thread to continue.
  constexpr std::uint32_t kSenders = 8;
  constexpr unsigned kThreads = 4;
  constexpr std::uint64_t kPerSender = 20'000;
  constexpr std::uint64_t kBurst = 7;
  Mailbox mailbox(64);

  struct Sender {
    std::uint32_t id = 0;
    std::uint64_t next = 0;
    std::set<std::thread::id> threads;
  };
  std::vector<Sender> senders(kSenders);
  std::mutex pool_mu;
  std::deque<Sender*> pool;
  for (std::uint32_t i = 0; i < kSenders; ++i) {
    senders[i].id = i;
    pool.push_back(&senders[i]);
  }
  std::atomic<std::uint32_t> finished{0};
  std::atomic<bool> refused{false};  // Catch's assertions are for the test's own thread

  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (finished.load() < kSenders) {
        Sender* s = nullptr;
        {
          std::lock_guard lock(pool_mu);
          if (!pool.empty()) {
            s = pool.front();
            pool.pop_front();
          }
        }
        if (s == nullptr) {
          std::this_thread::yield();
          continue;
        }
        s->threads.insert(std::this_thread::get_id());
        for (std::uint64_t k = 0; k < kBurst && s->next < kPerSender; ++k) {
          if (!push_until_room(mailbox, numbered(s->id, s->next))) refused.store(true);
          ++s->next;
        }
        if (s->next == kPerSender) {
          finished.fetch_add(1);
          continue;
        }
        std::lock_guard lock(pool_mu);
        pool.push_back(s);
      }
    });
  }

  std::vector<std::uint64_t> expected(kSenders, 0);
  std::uint64_t out_of_order = 0;
  std::uint64_t received = 0;
  while (received < kSenders * kPerSender) {
    Envelope e;
    if (mailbox.pop(e) != Mailbox::PopResult::Item) {
      std::this_thread::yield();
      continue;
    }
    const Numbered* m = e.get<Numbered>();
    REQUIRE(m != nullptr);
    if (m->seq != expected[m->sender]) ++out_of_order;
    expected[m->sender] = m->seq + 1;
    ++received;
  }
  for (auto& t : threads) t.join();

  CHECK_FALSE(refused.load());
  CHECK(out_of_order == 0);
  CHECK(expected == std::vector<std::uint64_t>(kSenders, kPerSender));
  std::size_t most_threads = 0;
  for (const auto& s : senders) most_threads = std::max(most_threads, s.threads.size());
  CHECK(most_threads >= 2);  // the property is only tested if some sender did move
}

TEST_CASE("mailbox queue: a flood from many producers never holds more messages than the capacity", "[core][mailbox]") {
  constexpr std::size_t kCapacity = 8;
  constexpr unsigned kProducers = 16;
  constexpr std::uint64_t kEach = 5'000;
  Mailbox mailbox(kCapacity);
  std::atomic<std::uint64_t> pushed{0};
  std::atomic<bool> refused{false};
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (unsigned p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (std::uint64_t i = 0; i < kEach; ++i) {
        if (!push_until_room(mailbox, numbered(p, i))) refused.store(true);
        pushed.fetch_add(1);
      }
    });
  }
  std::size_t most = 0;
  std::uint64_t popped = 0;
  std::uint64_t over_bound = 0;
  while (popped < kProducers * kEach) {
    const std::size_t size = mailbox.size();  // queued + reserved by producers still linking
    most = std::max(most, size);
    // Pushes that returned Ok and were not popped yet are in the mailbox: never more than its
    // capacity. (A producer counts its push after it returns, so `popped` may run ahead.)
    if (size > kCapacity || pushed.load() > popped + kCapacity) ++over_bound;
    Envelope e;
    if (mailbox.pop(e) == Mailbox::PopResult::Item) ++popped;
  }
  for (auto& t : producers) t.join();
  CHECK_FALSE(refused.load());
  CHECK(over_bound == 0);
  CHECK(most == kCapacity);  // the flood did fill it
  Envelope e;
  CHECK(mailbox.pop(e) == Mailbox::PopResult::Empty);
  CHECK(mailbox.size() == 0);
}

TEST_CASE("mailbox queue: unbounded pushes pass the capacity, bounded ones then fail with Full", "[core][mailbox]") {
  Mailbox mailbox(2);
  for (std::uint64_t i = 0; i < 5; ++i) {
    Envelope e = numbered(1, i);
    REQUIRE(mailbox.push(e, false) == Mailbox::PushResult::Ok);
    CHECK_FALSE(e.valid());  // the mailbox took it
  }
  Envelope refused = numbered(1, 5);
  CHECK(mailbox.push(refused, true) == Mailbox::PushResult::Full);
  CHECK(refused.valid());  // given back to the sender
  CHECK(mailbox.size() == 5);
  for (std::uint64_t i = 0; i < 5; ++i) {
    Envelope out;
    REQUIRE(mailbox.pop(out) == Mailbox::PopResult::Item);
    CHECK(out.get<Numbered>()->seq == i);
  }
}

TEST_CASE("mailbox queue: a closed mailbox refuses new messages and still delivers the queued ones",
          "[core][mailbox]") {
  Mailbox mailbox(10);
  for (std::uint64_t i = 0; i < 3; ++i) {
    Envelope e = numbered(1, i);
    REQUIRE(mailbox.push(e, true) == Mailbox::PushResult::Ok);
  }
  CHECK(mailbox.close());
  CHECK_FALSE(mailbox.close());  // already closed
  Envelope late = numbered(1, 3);
  CHECK(mailbox.push(late, true) == Mailbox::PushResult::Closed);
  CHECK(mailbox.push(late, false) == Mailbox::PushResult::Closed);
  CHECK(late.valid());
  for (std::uint64_t i = 0; i < 3; ++i) {
    Envelope out;
    REQUIRE(mailbox.pop(out) == Mailbox::PopResult::Item);
    CHECK(out.get<Numbered>()->seq == i);
  }
  Envelope out;
  CHECK(mailbox.pop(out) == Mailbox::PopResult::Closed);

  mailbox.reopen();  // a restarted actor's successor takes messages again
  CHECK(mailbox.pop(out) == Mailbox::PopResult::Empty);
  REQUIRE(mailbox.push(late, true) == Mailbox::PushResult::Ok);
  CHECK(mailbox.pop(out) == Mailbox::PopResult::Item);
}

TEST_CASE("mailbox queue: closing during a flood loses nothing: every accepted message is popped or drained",
          "[core][mailbox]") {
  constexpr unsigned kProducers = 8;
  Mailbox mailbox(1'000'000);
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (unsigned p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      while (!go.load()) std::this_thread::yield();
      for (std::uint64_t i = 0;; ++i) {
        Envelope e = numbered(p, i);
        if (mailbox.push(e, (i % 2) == 0) != Mailbox::PushResult::Ok) break;  // bounded and unbounded alike
        accepted.fetch_add(1);
      }
    });
  }
  go.store(true);
  std::uint64_t popped = 0;
  while (popped < 20'000) {
    Envelope e;
    if (mailbox.pop(e) == Mailbox::PopResult::Item) ++popped;
  }
  REQUIRE(mailbox.close());
  // Producers that reserved before the close are still linking: drain waits for them.
  const std::vector<Envelope> rest = mailbox.drain();
  for (auto& t : producers) t.join();  // each saw Closed
  CHECK(popped + rest.size() == accepted.load());
  CHECK(mailbox.size() == 0);
  Envelope e;
  CHECK(mailbox.pop(e) == Mailbox::PopResult::Closed);
}

TEST_CASE("mailbox queue: one message shared by several mailboxes reaches each of them", "[core][mailbox]") {
  // A multicast queues one block in several mailboxes (and twice in one): each holds its own handle.
  Mailbox a(4);
  Mailbox b(4);
  Envelope original = numbered(7, 42);
  Envelope first = detail::EnvelopeAccess::share(original);
  Envelope second = detail::EnvelopeAccess::share(original);
  REQUIRE(a.push(first, true) == Mailbox::PushResult::Ok);
  REQUIRE(b.push(second, true) == Mailbox::PushResult::Ok);
  REQUIRE(a.push(original, true) == Mailbox::PushResult::Ok);
  for (Mailbox* m : {&a, &a, &b}) {
    Envelope out;
    REQUIRE(m->pop(out) == Mailbox::PopResult::Item);
    CHECK(*out.get<Numbered>() == Numbered{7, 42});
  }
  Envelope out;
  CHECK(a.pop(out) == Mailbox::PopResult::Empty);
  CHECK(b.pop(out) == Mailbox::PopResult::Empty);
}
