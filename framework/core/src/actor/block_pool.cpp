#include <elfin/detail/block_pool.hpp>

#include <array>
#include <cstdint>
#include <mutex>

#include <pthread.h>

#include <elfin/detail/spin_lock.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define ELFIN_BLOCK_POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ELFIN_BLOCK_POOL_OFF 1
#endif
#endif

namespace elfin::detail {

#if defined(ELFIN_BLOCK_POOL_OFF)

void* allocate_block(std::size_t size) { return ::operator new(size); }
void free_block(void* block, std::size_t size) noexcept { ::operator delete(block, size); }

#else

namespace {

constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = kMaxPooledBlock / kGranule;
// Blocks move between a thread and the depot kBatch at a time, so the depot's lock is taken once
// per kBatch allocations or frees at most; a thread keeps up to two batches per class, so a
// thread that alternates around a batch boundary does not go to the depot every time.
constexpr std::uint32_t kBatch = 32;
constexpr std::uint32_t kThreadMax = 2 * kBatch;
constexpr std::size_t kDepotBatches = 32;  // per class: 1024 blocks

struct FreeBlock {
  FreeBlock* next;
};

constexpr std::size_t class_of(std::size_t size) { return (size - 1) / kGranule; }
constexpr std::size_t class_size(std::size_t c) { return (c + 1) * kGranule; }

void release_chain(FreeBlock* head, std::size_t c) noexcept {
  while (head != nullptr) {
    FreeBlock* next = head->next;
    ::operator delete(head, class_size(c));
    head = next;
  }
}

// The shared depot: per class, up to kDepotBatches chains of kBatch blocks.
struct DepotClass {
  SpinLock mu;
  std::uint32_t batches = 0;                       // guarded by mu
  std::array<FreeBlock*, kDepotBatches> chains{};  // guarded by mu
};
constinit std::array<DepotClass, kClasses> g_depot{};

FreeBlock* depot_take(std::size_t c) noexcept {
  DepotClass& d = g_depot[c];
  std::lock_guard lock(d.mu);
  return d.batches == 0 ? nullptr : d.chains[--d.batches];
}

// Takes ownership of `chain` (kBatch blocks): kept, or given back to the system when full.
void depot_put(std::size_t c, FreeBlock* chain) noexcept {
  DepotClass& d = g_depot[c];
  {
    std::lock_guard lock(d.mu);
    if (d.batches < kDepotBatches) {
      d.chains[d.batches++] = chain;
      return;
    }
  }
  release_chain(chain, c);
}

// A process forked while another thread held a depot lock would find it held forever: the fork
// waits until every lock is free, and both sides release them.
void lock_depot() noexcept {
  for (DepotClass& d : g_depot) d.mu.lock();
}
void unlock_depot() noexcept {
  for (DepotClass& d : g_depot) d.mu.unlock();
}
[[maybe_unused]] const int g_fork_guard = pthread_atfork(lock_depot, unlock_depot, unlock_depot);

enum class CacheState : std::uint8_t { Unopened, Open, Closed };

// Trivially destructible, so it can be used until the thread's very end; CacheCloser empties it
// when the thread's thread-local objects are destroyed, and frees after that bypass it.
struct ThreadCache {
  std::array<FreeBlock*, kClasses> heads;
  std::array<std::uint32_t, kClasses> counts;
  CacheState state;
};
constinit thread_local ThreadCache t_cache{};

struct CacheCloser {
  CacheCloser() = default;
  CacheCloser(const CacheCloser&) = delete;
  CacheCloser& operator=(const CacheCloser&) = delete;
  ~CacheCloser() {
    t_cache.state = CacheState::Closed;
    for (std::size_t c = 0; c < kClasses; ++c) {
      release_chain(t_cache.heads[c], c);
      t_cache.heads[c] = nullptr;
      t_cache.counts[c] = 0;
    }
  }
};

// True once this thread's cache may hold blocks (its closer is registered); false after the
// thread began destroying its thread-locals.
[[gnu::noinline]] bool open_cache() noexcept {
  if (t_cache.state == CacheState::Unopened) {
    static thread_local CacheCloser closer;
    t_cache.state = CacheState::Open;
  }
  return t_cache.state == CacheState::Open;
}

[[gnu::noinline]] void* allocate_slow(std::size_t c) {
  if (open_cache()) {
    if (FreeBlock* chain = depot_take(c)) {
      t_cache.heads[c] = chain->next;
      t_cache.counts[c] = kBatch - 1;
      return chain;
    }
  }
  return ::operator new(class_size(c));
}

// The thread holds more than kThreadMax blocks of class c: a batch goes to the depot.
[[gnu::noinline]] void spill(std::size_t c) noexcept {
  FreeBlock* chain = t_cache.heads[c];
  FreeBlock* last = chain;
  for (std::uint32_t i = 1; i < kBatch; ++i) last = last->next;
  t_cache.heads[c] = last->next;
  t_cache.counts[c] -= kBatch;
  last->next = nullptr;
  depot_put(c, chain);
}

}  // namespace

// `size - 1` sends a request for 0 bytes to the system too.
void* allocate_block(std::size_t size) {
  if (size - 1 >= kMaxPooledBlock) return ::operator new(size);
  const std::size_t c = class_of(size);
  ThreadCache& cache = t_cache;
  if (FreeBlock* block = cache.heads[c]) {
    cache.heads[c] = block->next;
    --cache.counts[c];
    return block;
  }
  return allocate_slow(c);
}

void free_block(void* block, std::size_t size) noexcept {
  if (size - 1 >= kMaxPooledBlock) return ::operator delete(block, size);
  const std::size_t c = class_of(size);
  ThreadCache& cache = t_cache;
  if (cache.state != CacheState::Open && !open_cache()) return ::operator delete(block, class_size(c));
  auto* node = static_cast<FreeBlock*>(block);
  node->next = cache.heads[c];
  cache.heads[c] = node;
  if (++cache.counts[c] > kThreadMax) spill(c);
}

#endif

}  // namespace elfin::detail
