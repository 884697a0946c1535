// GroupSeries: one thread's copy of one group's per-message built-in metrics — sent counts and
// handling times per message type, waiting and busy times — recorded without a lock or a lookup.
//
// Each recording thread has its own GroupSeries per (group, actor key) inside its MetricsStorage
// shard; an actor caches a pointer to the one of the thread it runs on (ActorTelemetry::series), so a
// recording is a pointer compare and a few plain adds. The scraper sums every thread's copies.
// An actor that finishes loses nothing: what it recorded stays in the threads' copies.
//
// Memory ordering (single writer, concurrent reader):
// - Only the thread that owns the shard writes a GroupSeries (GroupTelemetry::series picks the
//   calling thread's copy), so an update is a relaxed load plus a relaxed store, not an atomic
//   read-modify-write: no other thread can write in between, and on x86 both are plain moves.
// - The scraper reads with relaxed loads. It needs no ordering with the writer: each value it
//   reads is one the writer stored (atomics do not tear), and a scrape that misses the very last
//   update shows it at the next one. A histogram's count is the sum of its buckets as read, so
//   `_count` always equals the `+Inf` bucket; `_sum` may lag or lead it by the one value being
//   recorded, as with any lock-free Prometheus client.
// - A message type's slot is claimed by storing its vtable with release after the slot (zeroed at
//   construction) is ready; the scraper loads it with acquire and skips empty slots. Chunks of
//   slots are appended the same way (release store of `next`, acquire load by the scraper).
// Tested under ThreadSanitizer by tests/unit/core/telemetry.test.cpp ("scraping while actors
// record ...").
//
// Thread safety: `record`/`add`/`of` only from the owning thread; `load`/`for_each_message` from
// any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <elfin/message.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::detail {

class GroupRuntime;

/// A counter with one writing thread.
class SeriesCounter {
 public:
  void add(std::uint64_t by) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t load() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

/// A duration histogram with one writing thread and telemetry's buckets (kept in nanoseconds, so a
/// recording is integer compares and adds).
class SeriesHistogram {
 public:
  void record_ns(std::uint64_t ns) noexcept {
    std::size_t bucket = 0;
    while (bucket < kBoundsNs.size() && ns > kBoundsNs[bucket]) ++bucket;
    bump(counts_[bucket], 1);
    bump(sum_ns_, ns);
  }
  /// `count` (≥ 1) messages handled in `ns` together, one handling window (actor_telemetry.hpp):
  /// within the first bucket they all are there; otherwise one took it all and the others 0.
  void record_window(std::uint32_t count, std::uint64_t ns) noexcept {
    if (ns <= kBoundsNs[0]) {
      bump(counts_[0], count);
      bump(sum_ns_, ns);
      return;
    }
    bump(counts_[0], count - 1);
    record_ns(ns);
  }
  /// The histogram as Prometheus sees it (seconds); any thread.
  [[nodiscard]] telemetry::Histogram load() const;

  /// telemetry::kBuckets in nanoseconds (every bound is a whole number of them).
  static constexpr std::array<std::uint64_t, telemetry::kBuckets.size()> kBoundsNs = [] {
    std::array<std::uint64_t, telemetry::kBuckets.size()> out{};
    for (std::size_t i = 0; i < out.size(); ++i) {
      // NOLINTNEXTLINE(bugprone-incorrect-roundings): constexpr (llround is not); every bound is positive
      out[i] = static_cast<std::uint64_t>(telemetry::kBuckets[i] * 1e9 + 0.5);
    }
    return out;
  }();

 private:
  static void bump(std::atomic<std::uint64_t>& v, std::uint64_t by) noexcept {
    v.store(v.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  std::array<std::atomic<std::uint64_t>, telemetry::kBuckets.size() + 1> counts_{};  // the last is +Inf
  std::atomic<std::uint64_t> sum_ns_{0};
};

/// How a request the group made ended, as its requester saw it (a label of elfin_requests_total).
enum class RequestOutcome : std::uint8_t { Ok, Failed, Ignored };
inline constexpr std::size_t kRequestOutcomes = 3;

/// The series of one message type: how many the group sent, how long its actors handled them,
/// and, for a request type, how the group's requests ended and how long their answers took.
struct MessageSeries {
  std::atomic<const MessageVTable*> message{nullptr};  ///< null: a free slot
  SeriesCounter sent;
  SeriesHistogram handling;
  std::array<SeriesCounter, kRequestOutcomes> requests;
  SeriesHistogram request_time;
};

class GroupSeries {
 public:
  /// `actor_key`: the actor's key text with `system.telemetry.per_actor_key`, else null.
  GroupSeries(const GroupRuntime* group, std::shared_ptr<const std::string> actor_key)
      : group_(group), actor_key_(std::move(actor_key)) {}
  GroupSeries(const GroupSeries&) = delete;
  GroupSeries& operator=(const GroupSeries&) = delete;

  [[nodiscard]] const GroupRuntime* group() const { return group_; }
  [[nodiscard]] const std::shared_ptr<const std::string>& actor_key() const { return actor_key_; }

  /// The slot of `message`, claimed on first use. Owning thread only.
  [[nodiscard]] MessageSeries& of(const MessageVTable& message) {
    for (Chunk* chunk = &first_;; chunk = chunk->next_owned.get()) {
      for (auto& slot : chunk->slots) {
        const MessageVTable* held = slot.message.load(std::memory_order_relaxed);  // we wrote it
        if (held == &message) return slot;
        if (held == nullptr) {
          slot.message.store(&message, std::memory_order_release);
          return slot;
        }
      }
      if (chunk->next_owned == nullptr) {
        chunk->next_owned = std::make_unique<Chunk>();
        chunk->next.store(chunk->next_owned.get(), std::memory_order_release);
      }
    }
  }

  /// Calls `f(const MessageSeries&)` for every claimed slot. Any thread.
  template <class F>
  void for_each_message(F&& f) const {
    for (const Chunk* chunk = &first_; chunk != nullptr; chunk = chunk->next.load(std::memory_order_acquire)) {
      for (const auto& slot : chunk->slots) {
        if (slot.message.load(std::memory_order_acquire) == nullptr) return;  // slots fill in order
        f(slot);
      }
    }
  }

  SeriesHistogram waiting;  ///< elfin_message_waiting_time_seconds
  SeriesHistogram busy;     ///< elfin_busy_time_seconds

 private:
  struct Chunk {
    std::array<MessageSeries, 4> slots;
    std::unique_ptr<Chunk> next_owned;  // owning thread only
    std::atomic<Chunk*> next{nullptr};  // the same chunk, published to the scraper
  };

  const GroupRuntime* group_;
  std::shared_ptr<const std::string> actor_key_;
  Chunk first_;
};

}  // namespace elfin::detail
