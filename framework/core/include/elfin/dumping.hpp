// Dumping: every message an actor receives or sends, recorded for the dumper group to write.
//
// Dumping is on when the topology has a `system.dumpers` group. Recording is cheap: a dump copies
// the bytes of a small trivially copyable message or keeps a shared handle to the message (no
// serialization) and goes into the recording thread's own shard; the dumper drains all shards on an
// interval and serializes off the actor threads.
//
// Per group (`[<group>.system.dumping]`, reloadable):
//
//   [counters.system.dumping]
//   disabled = false     # true: nothing of this group is dumped
//   max_rate = 100000    # dumps per second; over it dumps are dropped (and counted as limited);
//                        # 0: none, 1000000000 or more: no limit
//
// Per message type: `ELFIN_NO_DUMPING;` inside the struct. Per field: wrap it in `Hidden<T>` and
// dumps show "<hidden>" while the network and everything else see the value.
//
// A dump the rate limit lets through takes the group's next sequence number; a stretch of dropped
// dumps skips one number, and a dump lost to a full storage skips its own, so any gap in a group's
// `s` values shows where dumps are missing (how many the limit dropped: the limited counter).
//
// Where dumps wait for the dumper (the storage, its shards and chunks) is the runtime's business:
// elfin/internal/dump_storage.hpp, outside the public headers.
//
// Thread safety: `Hidden` and `DumpingConfig` are value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <msgpack.hpp>

#include <elfin/config.hpp>
#include <elfin/detail/dump_encoding.hpp>

namespace elfin {

/// `system.dumping` of a group.
struct DumpingConfig {
  bool disabled = false;
  std::uint64_t max_rate = 100'000;
  ELFIN_CONFIG(disabled, max_rate);
};

namespace dumping {

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
