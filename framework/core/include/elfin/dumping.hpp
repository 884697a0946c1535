// Dumping: every message an actor receives or sends, recorded for the dumper group to write.
//
// Dumping is on when the topology has a `system.dumpers` group. Recording is cheap: a dump keeps a
// shared handle to the message (no copy, no serialization) and goes into the recording thread's
// own shard; the dumper drains all shards on an interval and serializes off the actor threads.
//
// Per group (`[<group>.system.dumping]`, reloadable):
//
//   [counters.system.dumping]
//   disabled = false     # true: nothing of this group is dumped
//   max_rate = 100000    # dumps per second; over it dumps are dropped (and counted as limited)
//
// Per message type: `ELFIN_NO_DUMPING;` inside the struct. Per field: wrap it in `Hidden<T>` and
// dumps show "<hidden>" while the network and everything else see the value.
//
// Every dump takes the group's next sequence number, even one then dropped by the rate limit, so a
// gap in a group's `s` values shows where dumps are missing.
//
// Thread safety: `DumpStorage::push` from any thread, `drain` and `counters` from any one thread at a
// time (the dumper); `Hidden` is a value type.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include <elfin/config.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/envelope.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {
class GroupRuntime;
}  // namespace elfin::detail

namespace elfin {

/// `system.dumping` of a group.
struct DumpingConfig {
  bool disabled = false;
  std::uint64_t max_rate = 100'000;
  ELFIN_CONFIG(disabled, max_rate);
};

namespace detail {
inline thread_local bool t_encoding_for_dump = false;
}

namespace dumping {

/// True while this thread encodes a message body for a dump.
[[nodiscard]] inline bool encoding_for_dump() { return elfin::detail::t_encoding_for_dump; }

/// Marks the encoding done in its lifetime as "for a dump" (Hidden fields show "<hidden>").
class DumpEncodingScope {
 public:
  DumpEncodingScope() : previous_(std::exchange(elfin::detail::t_encoding_for_dump, true)) {}
  DumpEncodingScope(const DumpEncodingScope&) = delete;
  DumpEncodingScope& operator=(const DumpEncodingScope&) = delete;
  ~DumpEncodingScope() { elfin::detail::t_encoding_for_dump = previous_; }

 private:
  bool previous_;
};

enum class Direction : std::uint8_t { In, Out };

/// One recorded message. The body stays a shared handle to the sent message, or (responses, which
/// travel without an envelope) its msgpack encoding made when it was recorded.
struct Dump {
  const std::string* group = nullptr;      ///< lives as long as the system
  std::shared_ptr<const std::string> key;  ///< null for a singleton group
  std::uint64_t sequence_no = 0;
  std::uint64_t timestamp_ns = 0;  ///< unix time
  TraceId trace_id;
  std::uint32_t thread_no = 0;
  Direction direction = Direction::In;
  MessageKind kind = MessageKind::Regular;
  const MessageVTable* vtable = nullptr;  ///< the message's (the request's, for a response)
  Envelope message;                       ///< the body, when it is an envelope's message
  std::string encoded;                    ///< the body's msgpack, otherwise
  std::uint64_t correlation_id = 0;       ///< links a request and its responses; 0: none
};

/// The msgpack encoding of a dump's body, with Hidden fields hidden.
[[nodiscard]] std::string encode_body(const Dump& dump);

/// Counters the telemeter and the dumper report.
struct DumpingCounters {
  std::uint64_t emitted = 0;  ///< recorded into storage
  std::uint64_t limited = 0;  ///< dropped by a group's max_rate
  std::uint64_t lost = 0;     ///< dropped because the storage was full (the dumper fell behind)
};

/// Where dumps wait for the dumper: one shard per recording thread (hashed), each bounded.
class DumpStorage {
 public:
  static constexpr std::size_t kShards = 16;

  DumpStorage(std::uint16_t node_no, std::size_t capacity);
  DumpStorage(const DumpStorage&) = delete;
  DumpStorage& operator=(const DumpStorage&) = delete;

  [[nodiscard]] std::uint16_t node_no() const { return node_no_; }
  /// Records a dump; false (and counted as lost) when this thread's shard is full.
  bool push(Dump&& dump);
  /// Takes everything recorded so far (not ordered across shards: sort by timestamp if needed).
  [[nodiscard]] std::vector<Dump> drain();
  /// Counts a dump a group's rate limit dropped (in the calling thread's shard: no shared line).
  void count_limited();
  [[nodiscard]] DumpingCounters counters() const;

 private:
  struct alignas(64) Shard {
    elfin::detail::SpinLock mu;  // held for a push_back or a swap only
    std::vector<Dump> dumps;     // guarded by mu
    std::atomic<std::uint64_t> emitted{0};
    std::atomic<std::uint64_t> lost{0};
    std::atomic<std::uint64_t> limited{0};
  };

  std::uint16_t node_no_;
  std::size_t shard_capacity_;
  std::array<Shard, kShards> shards_;
};

/// A small number naming the calling thread in dumps (`th`); stable for the thread's life.
[[nodiscard]] std::uint32_t thread_no();

/// The storage of the system `group` runs in; null when the topology has no `system.dumpers`.
/// (From an actor: `dumping::storage_of(ctx)`, declared with Context.)
[[nodiscard]] DumpStorage* storage_of(const elfin::detail::GroupRuntime& group);

/// How many dumps may wait for the dumper before new ones are lost.
inline constexpr std::size_t kDefaultStorageCapacity = 1'000'000;

}  // namespace dumping

/// A field whose value dumps show as "<hidden>"; everywhere else (network, AnyMessage) it is the value.
template <class T>
struct Hidden {
  T value{};

  Hidden() = default;
  Hidden(T v) : value(std::move(v)) {}  // NOLINT: implicit, so `Login{.password = "..."}` reads well
  [[nodiscard]] T& operator*() { return value; }
  [[nodiscard]] const T& operator*() const { return value; }
  T* operator->() { return &value; }
  const T* operator->() const { return &value; }
  friend bool operator==(const Hidden&, const Hidden&) = default;

  template <class Packer>
  void msgpack_pack(Packer& packer) const {
    if (dumping::encoding_for_dump()) {
      packer.pack(std::string_view{"<hidden>"});
    } else {
      packer.pack(value);
    }
  }
  void msgpack_unpack(const msgpack::object& object) { object.convert(value); }
};

}  // namespace elfin
