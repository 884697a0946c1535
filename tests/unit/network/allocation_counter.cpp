// Replaces the global allocation functions of the network test binary with counting ones. Only the
// count is new; memory still comes from malloc (which the sanitizers intercept as usual).
#include "allocation_counter.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local std::uint64_t g_allocations = 0;

void* allocate(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

std::uint64_t elfin::test::allocations() { return g_allocations; }

// Every form that can pair with the deletes below is replaced (Catch2 uses the nothrow one), so memory
// from one allocator is never freed by another. Aligned forms stay the library's: their deletes too.
void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
