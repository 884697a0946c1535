// Addr: the address of an actor or of an actor group, unique inside a running system.
//
// An address names its node, so the same `send_to` works for local and (once the network lands)
// remote recipients. Layout, most significant bit first:
//
//   63           48 47      40 39         25 24                    0
//   ┌──────────────┬──────────┬─────────────┬───────────────────────┐
//   │   node_no    │ group_no │ generation  │         slot          │
//   │     16b      │    8b    │     15b     │          25b          │
//   └──────────────┴──────────┴─────────────┴───────────────────────┘
//
// A group's own address has slot 0. An actor's slot is reused after it finishes, with the
// generation bumped, so a stale address never reaches the slot's next tenant.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace elfin {

class Addr {
 public:
  static constexpr unsigned kSlotBits = 25;
  static constexpr unsigned kGenerationBits = 15;
  static constexpr unsigned kGroupBits = 8;
  static constexpr std::uint32_t kMaxSlot = (1u << kSlotBits) - 1;
  static constexpr std::uint32_t kMaxGeneration = (1u << kGenerationBits) - 1;

  constexpr Addr() = default;
  constexpr explicit Addr(std::uint64_t raw) : raw_(raw) {}

  static constexpr Addr make(std::uint16_t node_no, std::uint8_t group_no, std::uint32_t generation,
                             std::uint32_t slot) {
    return Addr{(std::uint64_t{node_no} << 48) | (std::uint64_t{group_no} << 40) |
                (std::uint64_t{generation & kMaxGeneration} << kSlotBits) | (slot & kMaxSlot)};
  }
  static constexpr Addr group(std::uint16_t node_no, std::uint8_t group_no) { return make(node_no, group_no, 0, 0); }

  [[nodiscard]] constexpr std::uint64_t raw() const { return raw_; }
  [[nodiscard]] constexpr bool is_null() const { return raw_ == 0; }
  [[nodiscard]] constexpr std::uint16_t node_no() const { return static_cast<std::uint16_t>(raw_ >> 48); }
  [[nodiscard]] constexpr std::uint8_t group_no() const { return static_cast<std::uint8_t>(raw_ >> 40); }
  [[nodiscard]] constexpr std::uint32_t generation() const {
    return static_cast<std::uint32_t>(raw_ >> kSlotBits) & kMaxGeneration;
  }
  [[nodiscard]] constexpr std::uint32_t slot() const { return static_cast<std::uint32_t>(raw_) & kMaxSlot; }
  /// A group address (slot 0) routes through the group's inner router; an actor address does not.
  [[nodiscard]] constexpr bool is_group() const { return !is_null() && slot() == 0; }

  friend constexpr bool operator==(Addr, Addr) = default;
  friend constexpr auto operator<=>(Addr, Addr) = default;

 private:
  std::uint64_t raw_ = 0;
};

/// "node/group/generation/slot", e.g. "1/3/0/17"; "null" for the null address.
[[nodiscard]] std::string to_string(Addr addr);

}  // namespace elfin

template <>
struct std::hash<elfin::Addr> {
  std::size_t operator()(elfin::Addr a) const noexcept { return std::hash<std::uint64_t>{}(a.raw()); }
};
