// The dump storage: where recorded dumps wait for the dumper group to write them — one shard per
// recording thread, chunks handed to the writer and given back — and the layout of one dump.
//
// Internal to elfin: the runtime records into it (detail::GroupDumping) and the dumper battery
// drains it; user code never sees it (elfin/dumping.hpp is the public side of dumping).
//
// Thread safety: `DumpStorage::push`, `emplace`, `set_backlog_alarm` and `counters` from any thread,
// `drain*` and `recycle` from one thread at a time (the dumper's writer).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <elfin/detail/spin_lock.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {
class GroupRuntime;
}  // namespace elfin::detail

namespace elfin::dumping {

/// One recorded message. The body is one of: a copy of the message's bytes (small trivially
/// copyable messages, see MessageVTable::copy_for_dump), a shared handle to the sent message, or
/// (responses, which travel without an envelope) its msgpack encoding made when it was recorded.
///
/// Two cache lines exactly (aligned to one): a recorder writes dumps one after another, and the
/// writer thread on another core reads them, so every line a dump spans is a line moved between
/// the cores' caches.
struct alignas(64) Dump {
  // Provided, not defaulted: value-initializing a defaulted one (the storage's `emplace_back()`)
  // zeroes all 128 bytes (`rep stos`) before the members get their values, a few ns per dump; this
  // sets only the members that have an initializer.
  Dump() noexcept {}  // NOLINT(modernize-use-equals-default)

  const std::string* group = nullptr;  ///< lives as long as the system
  const std::string* key = nullptr;    ///< kept alive by its chunk's `keys`; null for a singleton group
  std::uint64_t sequence_no = 0;
  std::uint64_t timestamp_ns = 0;  ///< unix time
  TraceId trace_id;
  std::uint32_t thread_no = 0;
  Direction direction = Direction::In;
  MessageKind kind = MessageKind::Regular;
  bool body_copied = false;               ///< the body is in `copied`
  const MessageVTable* vtable = nullptr;  ///< the message's (the request's, for a response)
  /// The body, when copied; read only then, so not initialized (see the constructor).
  alignas(8) std::array<std::byte, kDumpCopyMaxSize> copied;
  Envelope message;                            ///< the body, when it is an envelope's message
  std::unique_ptr<const std::string> encoded;  ///< the body's msgpack, when it is a response
  std::uint64_t correlation_id = 0;            ///< links a request and its responses; 0: none
};

/// Appends the msgpack encoding of a dump's body, with Hidden fields hidden, to `out`.
void append_body(const Dump& dump, std::string& out);
/// The same in a string of its own.
[[nodiscard]] std::string encode_body(const Dump& dump);

/// Counters the telemeter and the dumper report.
struct DumpingCounters {
  std::uint64_t emitted = 0;  ///< recorded into storage
  std::uint64_t limited = 0;  ///< dropped by a group's max_rate
  std::uint64_t lost = 0;     ///< dropped because the storage was full (the dumper fell behind)
};

/// Dumps one thread recorded, in order: what the storage hands to the dumper and gets back.
///
/// The chunk owns the actor keys its dumps point to, one handle per key rather than one per dump:
/// a dump then takes no reference count, whose cache line would otherwise go back and forth
/// between the recording thread and the writer thread that releases it.
struct DumpChunk {
  std::vector<Dump> dumps;
  std::vector<std::shared_ptr<const std::string>> keys;

  /// A new dump at the end, for `key` (may be null), which the chunk keeps alive.
  Dump& add(const std::shared_ptr<const std::string>& key);
  /// What add does to keep `key` alive; the pointer for Dump::key.
  const std::string* retain(const std::shared_ptr<const std::string>& key);
  [[nodiscard]] std::size_t size() const { return dumps.size(); }
  [[nodiscard]] bool empty() const { return dumps.empty(); }
};

/// Where dumps wait for the dumper: one shard per recording thread (hashed), all sharing one
/// capacity. A recording thread appends to its shard's chunk, takes free slots from the shared
/// count a chunk's worth at a time (so it touches shared state once per kChunkSize dumps, and one
/// busy thread may still use the whole capacity), and never moves a dump once stored.
///
/// The dumper drains whole chunks and gives them back with `recycle` once written: only then are
/// their slots free again, so the capacity bounds what waits for the disk too, and their memory
/// goes back to the recorders instead of being allocated anew. That memory is kept, up to the
/// capacity's worth (a dump is 128 bytes: 128 MB for the default million), once a burst needed it.
class DumpStorage {
 public:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kChunkSize = 1024;
  /// How many records ahead of the one being written a recorder prefetches (8 to 64 measured alike).
  static constexpr std::size_t kPrefetchAhead = 16;

  DumpStorage(std::uint16_t node_no, std::size_t capacity);
  DumpStorage(const DumpStorage&) = delete;
  DumpStorage& operator=(const DumpStorage&) = delete;

  [[nodiscard]] std::uint16_t node_no() const { return node_no_; }
  /// Records a dump of the actor with `key` (null for none: `dump.key` is set from it); false (and
  /// counted as lost) when the storage is full.
  bool push(Dump&& dump, const std::shared_ptr<const std::string>& key = nullptr);
  /// Records a dump of the actor with `key` (null for none) made in place by `fill(Dump&)` (on a
  /// fresh Dump, called only if there is room), which spares moving it in; false (and counted as
  /// lost) when the storage is full.
  template <class Fill>
  bool emplace(const std::shared_ptr<const std::string>& key, Fill&& fill);
  /// The unix time in nanoseconds for a dump's `ts`: where the kernel keeps time with the CPU's
  /// time-stamp counter, the TSC anchored to the realtime clock (again at every drain, so it
  /// follows clock adjustments), a third of a precise clock_gettime's cost; clock_gettime elsewhere.
  [[nodiscard]] std::uint64_t now_ns() const;
  /// Takes everything recorded so far: chunks each in recording order, not ordered across chunks
  /// (sort by timestamp if needed). Their slots stay taken until `recycle`.
  [[nodiscard]] std::vector<DumpChunk> drain_chunks();
  /// Destroys the dumps of drained chunks, frees their slots and keeps their memory for reuse.
  void recycle(std::vector<DumpChunk> chunks);
  /// The drained dumps in one chunk, for callers that keep them (tests, tools): their slots are
  /// free at once, as the storage no longer holds them.
  [[nodiscard]] DumpChunk drain();
  /// Calls `alarm` (on a recording thread) when `chunks` full chunks wait for a drain, once until
  /// the next drain: how the writer learns that dumps come faster than its interval drains them,
  /// and drains before they fill the storage and fall out of the caches. An empty `alarm` clears
  /// it; when this returns, no call of the previous alarm is running.
  void set_backlog_alarm(std::size_t chunks, std::function<void()> alarm);
  /// Counts a dump a group's rate limit dropped: on most threads (the first kOwnedCounters to
  /// record) in a counter only that thread writes, a load and a store with no read-modify-write,
  /// since a stream over its limit pays this on every message; elsewhere in the thread's shard.
  void count_limited();
  /// The calling thread's own counter of limited dumps (only it writes it: a load and a store
  /// count one), or null on a thread past the first kOwnedCounters.
  [[nodiscard]] std::atomic<std::uint64_t>* own_limited_counter();
  [[nodiscard]] DumpingCounters counters() const;

 private:
  struct alignas(64) Shard {
    elfin::detail::SpinLock mu;   // held for an append or a drain's swap
    DumpChunk current;            // guarded by mu; no capacity until the next append needs one
    std::vector<DumpChunk> full;  // guarded by mu
    std::size_t credit = 0;       // guarded by mu: slots taken from free_slots_, not used yet
    // Read by counters() without mu. `emitted`, on every dump, is written under mu as a load and a
    // store (no read-modify-write); the other two, on the paths that drop a dump, are added to.
    std::atomic<std::uint64_t> emitted{0};
    std::atomic<std::uint64_t> lost{0};
    std::atomic<std::uint64_t> limited{0};
  };

  /// The calling thread's shard.
  Shard& own_shard();
  // next_slot and commit_slot are inline (below) and must stay so: with the fill visible around
  // them, the compiler writes each field of a fresh dump once, in place.
  /// A fresh dump at the end of `shard`'s chunk (its lock held), or null when the storage is full.
  [[gnu::always_inline]] Dump* next_slot(Shard& shard);
  /// Counts the dump `next_slot` gave and closes a chunk it filled (the shard's lock held); true
  /// if it closed one.
  [[gnu::always_inline]] bool commit_slot(Shard& shard);
  /// The slow paths of next_slot and commit_slot, once per kChunkSize dumps.
  void start_chunk(Shard& shard);
  void close_chunk(Shard& shard);
  /// Counts a chunk closed and rings the backlog alarm at its threshold.
  void count_closed_chunk();
  /// Takes up to kChunkSize free slots for `shard` (its lock held); false if none are left.
  bool take_credit(Shard& shard);
  /// Sets the TSC's offset to the realtime clock (when the TSC is used).
  void anchor_clock();
  /// An empty chunk with room for kChunkSize dumps: a recycled one if any.
  DumpChunk empty_chunk();

  std::array<Shard, kShards> shards_;
  static constexpr std::size_t kOwnedCounters = 64;
  struct alignas(64) OwnedCounter {
    std::atomic<std::uint64_t> n{0};  // written by the thread whose thread_no() is its index only
  };
  std::array<OwnedCounter, kOwnedCounters> limited_by_thread_;
  std::mutex pool_mu_;
  std::vector<DumpChunk> pool_;  // guarded by pool_mu_; empty chunks with their memory
  std::size_t max_pool_;         // enough chunks for the whole capacity, and no more
  // Relaxed: a count (the dumps are guarded by the shard locks), touched once per chunk.
  std::atomic<std::size_t> free_slots_;
  // unix ns = clock_offset_ + the TSC in ns; relaxed: one word, any recent value will do.
  std::atomic<std::uint64_t> clock_offset_{0};
  std::uint16_t node_no_;
  // Chunks closed since the last drain; relaxed: a hint for the alarm, touched once per chunk.
  std::atomic<std::size_t> closed_chunks_{0};
  std::mutex alarm_mu_;                   // held while the alarm is set or rung, so clearing it waits for a ring
  std::function<void()> alarm_;           // guarded by alarm_mu_
  std::atomic<std::size_t> alarm_at_{0};  // 0: no alarm; relaxed: read once per chunk
};

/// Asks for a record's two cache lines in a state ready for writing (PREFETCHW) without waiting.
///
/// Why: a chunk's records were last read (and destroyed) by the writer thread on another core, so
/// each line a recorder writes must first be taken back from that core. Written without a
/// prefetch, those stores wait in the store buffer, and the next atomic instruction of the actor
/// (a mailbox lock, a reference count) stalls until they drain: on a 2-core AMD EPYC VM that was
/// most of what dumping cost (`throughput_1to1_dumping_all` 0.26 -> 0.45). A hint: it never faults,
/// and x86-64 CPUs older than the instruction execute it as a no-op.
inline void prefetch_for_write([[maybe_unused]] const Dump* dump) {
#if defined(__x86_64__)
  const char* line = reinterpret_cast<const char*>(dump);
  asm volatile("prefetchw %0" : : "m"(*line));
  asm volatile("prefetchw %0" : : "m"(*(line + 64)));
#endif
}

inline Dump* DumpStorage::next_slot(Shard& shard) {
  if (shard.credit == 0 && !take_credit(shard)) return nullptr;
  --shard.credit;
  auto& dumps = shard.current.dumps;
  if (dumps.capacity() == 0) start_chunk(shard);
  // kPrefetchAhead records ahead: far enough for the lines to arrive before they are written.
  if (dumps.size() + kPrefetchAhead < dumps.capacity())
    prefetch_for_write(dumps.data() + dumps.size() + kPrefetchAhead);
  return &dumps.emplace_back();
}

inline bool DumpStorage::commit_slot(Shard& shard) {
  shard.emitted.store(shard.emitted.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (shard.current.dumps.size() < kChunkSize) return false;
  close_chunk(shard);
  return true;
}

template <class Fill>
bool DumpStorage::emplace(const std::shared_ptr<const std::string>& key, Fill&& fill) {
  Shard& shard = own_shard();
  bool closed_chunk = false;
  {
    std::lock_guard lock(shard.mu);
    if (Dump* slot = next_slot(shard)) {
      std::forward<Fill>(fill)(*slot);
      slot->key = shard.current.retain(key);
      closed_chunk = commit_slot(shard);
    } else {
      shard.lost.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  if (closed_chunk) count_closed_chunk();  // outside the shard's lock: it may wake the writer
  return true;
}

/// A small number naming the calling thread in dumps (`th`); stable for the thread's life.
[[nodiscard]] std::uint32_t thread_no();

/// The storage of the system `group` runs in; null when the topology has no `system.dumpers`.
/// (From an actor: `dumping::storage_of(ctx)`, declared with Context.)
[[nodiscard]] DumpStorage* storage_of(const elfin::detail::GroupRuntime& group);

/// How many dumps may wait for the dumper before new ones are lost.
inline constexpr std::size_t kDefaultStorageCapacity = 1'000'000;

}  // namespace elfin::dumping
