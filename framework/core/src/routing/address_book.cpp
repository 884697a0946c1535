#include "routing/address_book.hpp"

#include <stdexcept>

#include <elfin/detail/actor_cell.hpp>

namespace elfin::detail {

AddressBook::~AddressBook() {
  for (auto& page : pages_) delete page.load(std::memory_order_acquire);
}

AddressBook::Slot* AddressBook::slot(std::uint32_t index) const {
  Page* page = pages_[index >> kPageBits].load(std::memory_order_acquire);
  return page ? &page->slots[index & (kPageSize - 1)] : nullptr;
}

Addr AddressBook::insert(std::shared_ptr<ActorCell> cell, std::uint16_t node_no, std::uint8_t group_no) {
  std::uint32_t index;
  {
    std::lock_guard lock(alloc_mu_);
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (next_ > Addr::kMaxSlot) throw std::length_error("elfin: too many live actors (address space exhausted)");
      index = next_++;
      auto& page = pages_[index >> kPageBits];
      // Published with release so `slot()`'s acquire load sees a constructed page.
      if (page.load(std::memory_order_relaxed) == nullptr) page.store(new Page, std::memory_order_release);
    }
  }
  Slot* s = slot(index);
  std::lock_guard lock(stripe(index));
  const Addr addr = Addr::make(node_no, group_no, s->generation.load(std::memory_order_relaxed), index);
  cell->set_addr(addr);  // before publishing, so lookups never see a cell without its address
  s->cell = std::move(cell);
  return addr;
}

std::shared_ptr<ActorCell> AddressBook::find(Addr addr) const {
  const std::uint32_t index = addr.slot();
  Slot* s = slot(index);
  if (s == nullptr) return nullptr;
  std::lock_guard lock(stripe(index));
  if (s->generation.load(std::memory_order_relaxed) != addr.generation() || !s->cell) return nullptr;
  return s->cell;
}

bool AddressBook::find_into(Addr addr, RouteCache* cache, Targets& out) const {
  const std::uint32_t index = addr.slot();
  Slot* s = slot(index);
  if (s == nullptr) return false;
  // The slot still has the generation the cache saw: nobody left it since, so it holds the same actor.
  if (cache != nullptr && cache->home == s && cache->version == addr.generation() &&
      s->generation.load(std::memory_order_acquire) == addr.generation()) {
    out.push_borrowed(cache->cell.get(), *cache);
    return true;
  }
  std::lock_guard lock(stripe(index));
  if (s->generation.load(std::memory_order_relaxed) != addr.generation() || !s->cell) return false;
  if (cache != nullptr) cache->fill(s, addr.generation(), s->cell);
  out.push(s->cell);
  return true;
}

void AddressBook::remove(Addr addr) {
  const std::uint32_t index = addr.slot();
  Slot* s = slot(index);
  if (s == nullptr) return;
  {
    std::lock_guard lock(stripe(index));
    const std::uint32_t generation = s->generation.load(std::memory_order_relaxed);
    if (generation != addr.generation() || !s->cell) return;
    s->cell.reset();
    s->generation.store((generation + 1) & Addr::kMaxGeneration, std::memory_order_release);
  }
  std::lock_guard lock(alloc_mu_);
  free_.push_back(index);
}

std::vector<std::shared_ptr<ActorCell>> AddressBook::snapshot() const {
  std::vector<std::shared_ptr<ActorCell>> cells;
  for (std::uint32_t p = 0; p < kPages; ++p) {
    Page* page = pages_[p].load(std::memory_order_acquire);
    if (page == nullptr) continue;
    for (std::uint32_t i = 0; i < kPageSize; ++i) {
      std::lock_guard lock(stripe(p * kPageSize + i));
      if (page->slots[i].cell) cells.push_back(page->slots[i].cell);
    }
  }
  return cells;
}

}  // namespace elfin::detail
