// Block pool: recycled memory for what every spawn allocates — actor cells (with their shared_ptr
// control block), actors' coroutine frames and the groups' map nodes — and for every message's
// envelope block.
//
// Blocks come in size classes of 64 bytes up to kMaxPooledBlock; each thread keeps a short free
// list per class, so an actor that ends and one that starts on the same thread exchange a block
// with a few loads and stores, where glibc takes a hundred instructions or more for blocks of a
// cell's size (they are too large and too numerous for its per-thread cache). Threads that free
// more than they allocate hand batches to a shared depot that the others draw from; both the
// thread lists and the depot are bounded, and blocks beyond the bound go back to the system, so
// the pool keeps at most a few thousand blocks per class however many actors once lived.
// Larger requests go straight to the system. Under AddressSanitizer the pool is off (every block
// is a plain allocation), so use after free is still caught.
//
// Why a recycled cell cannot be reached by an old address (no ABA): a cell's block returns to
// the pool only from its destructor, that is once the last shared_ptr to it is gone. The address
// book's slot, the group's map, route caches, wakers and send targets all hold shared_ptrs (a
// borrowed target borrows from a route cache that holds one), so nothing that could still deliver
// to the old actor points at the block when it is reused. An address is checked against its
// slot's generation, which the address book bumps when the actor leaves and before it drops its
// reference; the slot, not the cell's memory, decides, so an old address finds no actor however
// the memory was reused (tests/unit/core/block_pool.test.cpp).
//
// Thread safety: all functions from any thread; a block may be freed on another thread than the
// one that allocated it.
#pragma once

#include <cstddef>
#include <new>

namespace elfin::detail {

inline constexpr std::size_t kMaxPooledBlock = 2048;

/// At least `size` bytes, aligned as operator new aligns (16 on x86-64). Throws std::bad_alloc.
[[nodiscard]] void* allocate_block(std::size_t size);
/// Returns a block from allocate_block; `size` is the size it was asked for.
void free_block(void* block, std::size_t size) noexcept;

/// An allocator over the pool, for std::allocate_shared and node-based containers.
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the pool's blocks are not over-aligned");
  // NOLINTBEGIN(bugprone-sizeof-expression): T is what a container allocates, a hash table's bucket pointers too
  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(allocate_block(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_block(static_cast<void*>(p), n * sizeof(T)); }
  // NOLINTEND(bugprone-sizeof-expression)
  template <class U>
  bool operator==(const PooledAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace elfin::detail
