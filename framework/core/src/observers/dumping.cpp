#include <elfin/dumping.hpp>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include <elfin/any_message.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/request.hpp>
#include "actor/current_actor.hpp"
#include "system/system_core.hpp"

namespace elfin {

namespace dumping {

DumpStorage* storage_of(const detail::GroupRuntime& group) { return group.system().dump_storage(); }

void append_body(const Dump& dump, std::string& out) {
  DumpEncodingScope for_dump;
  if (dump.body_copied) {
    // The bytes of a trivially copyable message: copying them made an object of its type there
    // (C++20's implicit object creation), so pack may read them as one.
    dump.vtable->pack(dump.copied.data(), out);
  } else if (dump.message.valid()) {
    dump.message.vtable().pack(dump.message.data(), out);
  } else if (dump.encoded != nullptr) {
    out += *dump.encoded;
  }
}

std::string encode_body(const Dump& dump) {
  std::string out;
  append_body(dump, out);
  return out;
}

std::uint32_t thread_no() {
  static std::atomic<std::uint32_t> next{1};
  thread_local const std::uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

Dump& DumpChunk::add(const std::shared_ptr<const std::string>& key) {
  Dump& dump = dumps.emplace_back();
  dump.key = retain(key);
  return dump;
}

const std::string* DumpChunk::retain(const std::shared_ptr<const std::string>& key) {
  if (!key) return nullptr;
  // A chunk holds what one thread recorded in a short while: the dumps of the few actors it ran
  // lately, so a key is nearly always among the last handles kept (and kept once more otherwise).
  const std::size_t n = keys.size();
  for (std::size_t i = n; i > 0 && n - i < 8; --i) {
    if (keys[i - 1] == key) return key.get();
  }
  keys.push_back(key);
  return key.get();
}

// The storage's memory bound, as dumping.hpp and the guide state it, follows from this size.
static_assert(sizeof(Dump) == 128,
              "a dump record changed size: update the memory figures in dumping.hpp and dumping.md");

DumpStorage::DumpStorage(std::uint16_t node_no, std::size_t capacity)
    : max_pool_(capacity / kChunkSize + kShards), free_slots_(capacity), node_no_(node_no) {
  elfin::detail::calibrate_telemetry_clock();
  anchor_clock();
}

namespace {

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

#if defined(__x86_64__)
// The TSC's value in nanoseconds (since it started): q32 is below 2^32 and, for any TSC value a
// machine reaches in centuries, the high half too, so neither product overflows.
std::uint64_t tsc_ns(std::uint64_t tsc, std::uint64_t q32) {
  return (tsc >> 32) * q32 + (((tsc & 0xFFFF'FFFFU) * q32) >> 32);
}
#endif

}  // namespace

void DumpStorage::anchor_clock() {
#if defined(__x86_64__)
  if (const auto* c = elfin::detail::g_tsc_calibration.load(std::memory_order_acquire)) {
    // Unsigned wrap-around arithmetic: the offset may be "negative", the sum is still right.
    const std::uint64_t tsc = __rdtsc();
    clock_offset_.store(unix_now_ns() - tsc_ns(tsc, c->ns_per_tick_q32), std::memory_order_relaxed);
  }
#endif
}

std::uint64_t DumpStorage::now_ns() const {
#if defined(__x86_64__)
  if (const auto* c = elfin::detail::g_tsc_calibration.load(std::memory_order_acquire)) {
    return clock_offset_.load(std::memory_order_relaxed) + tsc_ns(__rdtsc(), c->ns_per_tick_q32);
  }
#endif
  return unix_now_ns();
}

bool DumpStorage::take_credit(Shard& shard) {
  std::size_t free = free_slots_.load(std::memory_order_relaxed);
  while (free > 0) {
    const std::size_t take = std::min(free, kChunkSize);
    if (free_slots_.compare_exchange_weak(free, free - take, std::memory_order_relaxed)) {
      shard.credit = take;
      return true;
    }
  }
  return false;
}

DumpChunk DumpStorage::empty_chunk() {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      DumpChunk chunk = std::move(pool_.back());
      pool_.pop_back();
      return chunk;
    }
  }
  DumpChunk chunk;
  chunk.dumps.reserve(kChunkSize);
  return chunk;
}

DumpStorage::Shard& DumpStorage::own_shard() { return shards_[thread_no() % kShards]; }

void DumpStorage::close_chunk(Shard& shard) { shard.full.push_back(std::exchange(shard.current, DumpChunk{})); }

void DumpStorage::start_chunk(Shard& shard) {
  shard.current = empty_chunk();
  // next_slot prefetches kPrefetchAhead records ahead of each one: these are the first ones.
  for (std::size_t i = 0; i < kPrefetchAhead; ++i) prefetch_for_write(shard.current.dumps.data() + i);
}

void DumpStorage::count_closed_chunk() {
  const std::size_t at = alarm_at_.load(std::memory_order_relaxed);
  // Only the thread whose chunk reaches the threshold rings: once until a drain resets the count.
  if (closed_chunks_.fetch_add(1, std::memory_order_relaxed) + 1 != at || at == 0) return;
  std::lock_guard lock(alarm_mu_);
  if (alarm_) alarm_();
}

void DumpStorage::set_backlog_alarm(std::size_t chunks, std::function<void()> alarm) {
  std::lock_guard lock(alarm_mu_);
  alarm_ = std::move(alarm);
  alarm_at_.store(alarm_ ? std::max<std::size_t>(chunks, 1) : 0, std::memory_order_relaxed);
}

bool DumpStorage::push(Dump&& dump, const std::shared_ptr<const std::string>& key) {
  return emplace(key, [&](Dump& slot) { slot = std::move(dump); });
}

std::vector<DumpChunk> DumpStorage::drain_chunks() {
  anchor_clock();  // follows changes of the realtime clock (NTP) and the TSC's calibration error
  closed_chunks_.store(0, std::memory_order_relaxed);  // before the swaps: a chunk closed after them rings anew
  std::vector<DumpChunk> out;
  for (Shard& shard : shards_) {
    std::vector<DumpChunk> full;
    DumpChunk current;
    std::size_t unused_credit = 0;
    {
      // Only swaps happen under the lock; recorders wait at most for that.
      std::lock_guard lock(shard.mu);
      full.swap(shard.full);
      std::swap(current, shard.current);
      unused_credit = std::exchange(shard.credit, 0);
    }
    free_slots_.fetch_add(unused_credit, std::memory_order_relaxed);
    for (auto& chunk : full) out.push_back(std::move(chunk));
    if (!current.empty()) out.push_back(std::move(current));
  }
  return out;
}

void DumpStorage::recycle(std::vector<DumpChunk> chunks) {
  std::size_t dumps = 0;
  for (auto& chunk : chunks) {
    dumps += chunk.size();
    chunk.dumps.clear();  // destroys the dumps (and releases their messages) here, outside any lock
    chunk.keys.clear();
  }
  {
    std::lock_guard lock(pool_mu_);
    for (auto& chunk : chunks) {
      if (pool_.size() >= max_pool_) break;
      if (chunk.dumps.capacity() >= kChunkSize) pool_.push_back(std::move(chunk));
    }
  }
  free_slots_.fetch_add(dumps, std::memory_order_relaxed);
}

DumpChunk DumpStorage::drain() {
  DumpChunk out;
  for (auto& chunk : drain_chunks()) {
    out.dumps.insert(out.dumps.end(), std::make_move_iterator(chunk.dumps.begin()),
                     std::make_move_iterator(chunk.dumps.end()));
    out.keys.insert(out.keys.end(), std::make_move_iterator(chunk.keys.begin()),
                    std::make_move_iterator(chunk.keys.end()));
  }
  free_slots_.fetch_add(out.size(), std::memory_order_relaxed);
  return out;
}

void DumpStorage::count_limited() {
  if (auto* n = own_limited_counter()) {
    n->store(n->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  shards_[thread_no() % kShards].limited.fetch_add(1, std::memory_order_relaxed);
}

std::atomic<std::uint64_t>* DumpStorage::own_limited_counter() {
  const std::uint32_t no = thread_no();
  return no < kOwnedCounters ? &limited_by_thread_[no].n : nullptr;
}

DumpingCounters DumpStorage::counters() const {
  DumpingCounters c;
  for (const Shard& shard : shards_) {
    c.emitted += shard.emitted.load(std::memory_order_relaxed);
    c.lost += shard.lost.load(std::memory_order_relaxed);
    c.limited += shard.limited.load(std::memory_order_relaxed);
  }
  for (const OwnedCounter& owned : limited_by_thread_) c.limited += owned.n.load(std::memory_order_relaxed);

  return c;
}

}  // namespace dumping

namespace detail {

namespace {

// The rate limit's clock: a few milliseconds coarse, but five times cheaper than the precise one,
// which only admitted dumps pay for (their `ts`).
std::uint64_t unix_coarse_now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace

bool current_actor_dumps() {
  ActorCell* cell = t_current_actor;
  return cell != nullptr && cell->group().dumping().active();
}

void record_response_sent(const MessageVTable& request, std::string encoded, TraceId trace_id,
                          std::uint64_t correlation_id) {
  ActorCell* cell = t_current_actor;
  cell->group().dumping().record_response(*cell, dumping::Direction::Out, request, std::move(encoded), trace_id,
                                          correlation_id);
}

std::string encode_error_for_dump(const RequestError& error) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  auto str = [&](std::string_view s) {
    packer.pack_str(static_cast<std::uint32_t>(s.size()));
    packer.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
  };
  packer.pack_map(1);
  str("RequestError");
  packer.pack_map(2);
  str("kind");
  str(error == RequestError::Failed ? "Failed" : error == RequestError::Ignored ? "Ignored" : "TimedOut");
  str("reason");
  str(error.reason());
  return std::string(buffer.data(), buffer.size());
}

std::uint64_t next_correlation_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void GroupDumping::attach(dumping::DumpStorage* storage, const std::string* group_name) {
  if (storage != nullptr) g_any_dumping.store(true, std::memory_order_relaxed);
  storage_ = storage;
  group_name_ = group_name;
  active_.store(storage_ != nullptr && !disabled_, std::memory_order_relaxed);
}

void GroupDumping::configure(const DumpingConfig& config) {
  limiter_.set_rate(config.max_rate);
  disabled_ = config.disabled;
  active_.store(storage_ != nullptr && !config.disabled, std::memory_order_relaxed);
}

std::uint64_t GroupDumping::take_sequence_no() {
  // One number is left out where the limit dropped dumps since the last one taken: the gap.
  const bool gap = dropped_.load(std::memory_order_relaxed) && dropped_.exchange(false, std::memory_order_relaxed);
  const std::uint64_t skip = gap ? 1 : 0;
  return next_sequence_no_.fetch_add(1 + skip, std::memory_order_relaxed) + skip;
}

bool GroupDumping::admit(std::uint64_t now_ns, std::uint64_t& sequence_no) {
  if (!limiter_.acquire(now_ns)) {
    note_dropped();
    return false;
  }
  sequence_no = take_sequence_no();
  return true;
}

bool GroupDumping::admit_or_count(std::uint64_t& sequence_no) {
  // Without a limit the clock is not read (the limiter does not look at it then): dumping
  // everything is the case that must be cheap.
  if (limiter_.unlimited()) {
    sequence_no = take_sequence_no();
    return true;
  }
  // The limit decides before anything is written: a dropped dump takes no sequence number, and
  // arms the thread's refusal pass, so the next ones are dropped inline (group_dumping.hpp).
  if (!admit(unix_coarse_now_ns(), sequence_no)) {
    storage_->count_limited();
    // Outside an actor (a test proxy's thread) no pass: nothing would end it before an idle.
    if (t_current_actor != nullptr) {
      if (auto* limited = storage_->own_limited_counter()) {
        t_dump_refusal_pass = DumpRefusalPass{this, limited, kDumpRefusalsPerPass};
      }
    }
    return false;
  }
  return true;
}

void GroupDumping::fill_common(dumping::Dump& dump, std::uint64_t sequence_no) const {
  dump.group = group_name_;
  dump.sequence_no = sequence_no;
  dump.timestamp_ns = storage_->now_ns();
  dump.thread_no = dumping::thread_no();
}

void GroupDumping::record_unless_limited(ActorCell& cell, dumping::Direction direction, const Envelope& envelope) {
  const MessageVTable& vtable = envelope.vtable();
  // Admission first: a dump the rate limit drops takes no sequence number (see admit_or_count).
  std::uint64_t sequence_no = 0;
  if (!admit_or_count(sequence_no)) return;
  // Filled in place, in the storage's chunk: nothing is moved afterwards.
  std::ignore = storage_->emplace(cell.key_for_dumps(), [&](dumping::Dump& dump) {
    fill_common(dump, sequence_no);
    dump.trace_id = envelope.trace_id();
    dump.direction = direction;
    dump.kind = envelope.kind();
    dump.vtable = &vtable;
    if (vtable.copy_for_dump != nullptr) {
      vtable.copy_for_dump(envelope.data(), dump.copied.data());
      dump.body_copied = true;
    } else {
      dump.message = EnvelopeAccess::share(envelope);
    }
    if (const auto& request = EnvelopeAccess::block(envelope)->request) dump.correlation_id = request->correlation_id();
  });
}

void GroupDumping::record_response(ActorCell& cell, dumping::Direction direction, const MessageVTable& request,
                                   std::string encoded, TraceId trace_id, std::uint64_t correlation_id) {
  if (!request.dumping_allowed || refused_by_pass()) return;
  std::uint64_t sequence_no = 0;
  if (!admit_or_count(sequence_no)) return;
  std::ignore = storage_->emplace(cell.key_for_dumps(), [&](dumping::Dump& dump) {
    fill_common(dump, sequence_no);
    dump.trace_id = trace_id;
    dump.direction = direction;
    dump.kind = MessageKind::Response;
    dump.vtable = &request;
    dump.encoded = std::make_unique<const std::string>(std::move(encoded));
    dump.correlation_id = correlation_id;
  });
}

}  // namespace detail
}  // namespace elfin
