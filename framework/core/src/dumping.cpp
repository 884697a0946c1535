#include <elfin/dumping.hpp>

#include <time.h>

#include <chrono>

#include <elfin/any_message.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/current_actor.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/response_dumping.hpp>
#include <elfin/request.hpp>

namespace elfin {

namespace dumping {

std::string encode_body(const Dump& dump) {
  if (!dump.message.valid()) return dump.encoded;
  DumpEncodingScope for_dump;
  return encode_message(dump.message.vtable(), dump.message.data());
}

std::uint32_t thread_no() {
  static std::atomic<std::uint32_t> next{1};
  thread_local const std::uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

DumpStorage::DumpStorage(std::uint16_t node_no, std::size_t capacity)
    : node_no_(node_no), shard_capacity_(std::max<std::size_t>(1, capacity / kShards)) {}

bool DumpStorage::push(Dump&& dump) {
  Shard& shard = shards_[thread_no() % kShards];
  {
    std::lock_guard lock(shard.mu);
    if (shard.dumps.size() < shard_capacity_) {
      shard.dumps.push_back(std::move(dump));
      shard.emitted.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  shard.lost.fetch_add(1, std::memory_order_relaxed);
  return false;
}

std::vector<Dump> DumpStorage::drain() {
  std::vector<Dump> out;
  for (Shard& shard : shards_) {
    std::vector<Dump> taken;
    {
      // Only the swap happens under the lock; recorders wait at most for that.
      std::lock_guard lock(shard.mu);
      taken.swap(shard.dumps);
    }
    if (out.empty()) {
      out = std::move(taken);
    } else {
      out.insert(out.end(), std::make_move_iterator(taken.begin()), std::make_move_iterator(taken.end()));
    }
  }
  return out;
}

void DumpStorage::count_limited() { shards_[thread_no() % kShards].limited.fetch_add(1, std::memory_order_relaxed); }

DumpingCounters DumpStorage::counters() const {
  DumpingCounters c;
  for (const Shard& shard : shards_) {
    c.emitted += shard.emitted.load(std::memory_order_relaxed);
    c.lost += shard.lost.load(std::memory_order_relaxed);
    c.limited += shard.limited.load(std::memory_order_relaxed);
  }

  return c;
}

}  // namespace dumping

namespace detail {

namespace {

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

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

bool GroupDumping::admit(std::uint64_t now_ns, std::uint64_t& sequence_no) {
  sequence_no = next_sequence_no_.fetch_add(1, std::memory_order_relaxed);
  return limiter_.acquire(now_ns);
}

bool GroupDumping::admit_or_count(std::uint64_t now_ns, std::uint64_t& sequence_no) {
  if (admit(now_ns, sequence_no)) return true;
  storage_->count_limited();
  return false;
}

void GroupDumping::push(ActorCell& cell, dumping::Dump&& dump, std::uint64_t now_ns) {
  dump.group = group_name_;
  dump.key = cell.key_for_dumps();
  dump.timestamp_ns = now_ns;
  dump.thread_no = dumping::thread_no();
  std::ignore = storage_->push(std::move(dump));
}

void GroupDumping::record(ActorCell& cell, dumping::Direction direction, const Envelope& envelope) {
  if (!envelope.vtable().dumping_allowed) return;
  // Admission first: a dump the rate limit drops costs no more than a clock read and two atomics.
  std::uint64_t sequence_no = 0;
  if (!admit_or_count(unix_coarse_now_ns(), sequence_no)) return;
  const std::uint64_t now_ns = unix_now_ns();
  dumping::Dump dump;
  dump.sequence_no = sequence_no;
  dump.trace_id = envelope.trace_id();
  dump.direction = direction;
  dump.kind = envelope.kind();
  dump.vtable = &envelope.vtable();
  dump.message = envelope.share();
  if (const auto& request = envelope.block()->request) dump.correlation_id = request->correlation_id();
  push(cell, std::move(dump), now_ns);
}

void GroupDumping::record_response(ActorCell& cell, dumping::Direction direction, const MessageVTable& request,
                                   std::string encoded, TraceId trace_id, std::uint64_t correlation_id) {
  if (!request.dumping_allowed) return;
  std::uint64_t sequence_no = 0;
  if (!admit_or_count(unix_coarse_now_ns(), sequence_no)) return;
  const std::uint64_t now_ns = unix_now_ns();
  dumping::Dump dump;
  dump.sequence_no = sequence_no;
  dump.trace_id = trace_id;
  dump.direction = direction;
  dump.kind = MessageKind::Response;
  dump.vtable = &request;
  dump.encoded = std::move(encoded);
  dump.correlation_id = correlation_id;
  push(cell, std::move(dump), now_ns);
}

}  // namespace detail
}  // namespace elfin
