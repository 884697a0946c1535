// TraceId: the 63-bit id that follows a chain of messages through the whole system.
//
// Layout (the elfo book's, MSB first): 1 reserved bit (0) | 25 bits unix seconds (wrapping after
// ~388 days) | 16 bits node_no | 12 bits chunk_no | 10 bits counter (1..=1023), i.e.
//   trace_id = (timestamp << 38) | (node_no << 22) | (chunk_no << 10) | counter
// Ids are generated per thread from chunks of 1023 taken from a global chunk counter, so
// generation is one thread-local increment in the common case.
//
// Every envelope is stamped with the sender's current trace id; `recv` makes the received
// envelope's id the actor's current one; responses carry the request's id.
//
// Thread safety: `TraceId` is a value type; `generate()` may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>

namespace elfin {

class TraceId {
 public:
  static constexpr unsigned kTimestampBits = 25;
  static constexpr unsigned kNodeBits = 16;
  static constexpr unsigned kChunkBits = 12;
  static constexpr unsigned kCounterBits = 10;
  static constexpr std::uint64_t kTimestampMax = (std::uint64_t{1} << kTimestampBits) - 1;

  constexpr TraceId() = default;  // the null id: "no trace yet"
  constexpr explicit TraceId(std::uint64_t raw) : raw_(raw) {}

  /// A fresh id for this node (set by the system at start, see `set_node_no`).
  [[nodiscard]] static TraceId generate();
  static constexpr TraceId compose(std::uint64_t timestamp, std::uint16_t node_no, std::uint16_t chunk_no,
                                   std::uint16_t counter) {
    return TraceId{((timestamp & kTimestampMax) << 38) | (std::uint64_t{node_no} << 22) |
                   (std::uint64_t{chunk_no & 0xfffu} << 10) | (counter & 0x3ffu)};
  }
  /// The node number stamped into generated ids; the system sets it once at start.
  static void set_node_no(std::uint16_t node_no);

  [[nodiscard]] constexpr std::uint64_t raw() const { return raw_; }
  [[nodiscard]] constexpr bool is_null() const { return raw_ == 0; }
  /// Valid ids are non-zero, have the top bit clear and a non-zero counter.
  [[nodiscard]] constexpr bool is_valid() const { return raw_ != 0 && (raw_ >> 63) == 0 && counter() != 0; }
  [[nodiscard]] constexpr std::uint64_t timestamp() const { return (raw_ >> 38) & kTimestampMax; }
  [[nodiscard]] constexpr std::uint16_t node_no() const { return static_cast<std::uint16_t>(raw_ >> 22); }
  [[nodiscard]] constexpr std::uint16_t chunk_no() const { return static_cast<std::uint16_t>((raw_ >> 10) & 0xfff); }
  [[nodiscard]] constexpr std::uint16_t counter() const { return static_cast<std::uint16_t>(raw_ & 0x3ff); }

  friend constexpr bool operator==(TraceId, TraceId) = default;
  friend constexpr auto operator<=>(TraceId, TraceId) = default;

 private:
  std::uint64_t raw_ = 0;
};

}  // namespace elfin

template <>
struct std::hash<elfin::TraceId> {
  std::size_t operator()(elfin::TraceId t) const noexcept { return std::hash<std::uint64_t>{}(t.raw()); }
};
