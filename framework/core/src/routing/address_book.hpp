// AddressBook: actor address → actor, for `send_to(addr)` and `request_to(addr)`.
//
// Slots live in pages allocated on demand and never moved, so a lookup is an index computation,
// one acquire load of the page pointer and one short lock of a striped mutex (stripes spread
// unrelated lookups over different locks). A slot's generation is bumped when its actor leaves,
// so an old address never reaches the slot's next tenant. The generation can also be read without
// the lock: a sending actor's route cache (route_cache.hpp) reuses its last lookup of an address
// while the slot's generation is still the address's.
//
// Thread safety: all functions from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <elfin/addr.hpp>
#include <elfin/detail/route_cache.hpp>
#include <elfin/detail/targets.hpp>

namespace elfin::detail {

class ActorCell;

class AddressBook {
 public:
  AddressBook() = default;
  AddressBook(const AddressBook&) = delete;
  AddressBook& operator=(const AddressBook&) = delete;
  ~AddressBook();

  /// Gives the cell a fresh address in `group_no`.
  Addr insert(std::shared_ptr<ActorCell> cell, std::uint16_t node_no, std::uint8_t group_no);
  [[nodiscard]] std::shared_ptr<ActorCell> find(Addr addr) const;
  /// Appends the actor at `addr` to `out`; false if there is none. With `cache` (the sending
  /// actor's), a repeated lookup of the same address takes neither the lock nor a reference.
  [[nodiscard]] bool find_into(Addr addr, RouteCache* cache, Targets& out) const;
  void remove(Addr addr);
  /// Every actor still registered (used once at shutdown).
  [[nodiscard]] std::vector<std::shared_ptr<ActorCell>> snapshot() const;

 private:
  static constexpr unsigned kPageBits = 12;
  static constexpr std::uint32_t kPageSize = 1u << kPageBits;
  static constexpr std::uint32_t kPages = (Addr::kMaxSlot + 1) >> kPageBits;
  static constexpr std::size_t kStripes = 64;

  struct Slot {
    std::shared_ptr<ActorCell> cell;
    std::atomic<std::uint32_t> generation{0};  // written under the stripe's lock
  };
  struct Page {
    std::array<Slot, kPageSize> slots;
  };

  Slot* slot(std::uint32_t index) const;
  std::mutex& stripe(std::uint32_t index) const { return stripes_[index % kStripes]; }

  std::array<std::atomic<Page*>, kPages> pages_{};
  mutable std::array<std::mutex, kStripes> stripes_;
  std::mutex alloc_mu_;
  std::vector<std::uint32_t> free_;  // guarded by alloc_mu_
  std::uint32_t next_ = 1;           // guarded by alloc_mu_; slot 0 means "the group itself"
};

}  // namespace elfin::detail
