#include <elfin/trace_id.hpp>

#include <atomic>
#include <ctime>

namespace elfin {

namespace {
std::atomic<std::uint16_t> g_node_no{0};
std::atomic<std::uint32_t> g_next_chunk{0};  // chunk numbers wrap at 4096: ids stay unique per second

struct Generator {
  std::uint16_t chunk_no = 0;
  std::uint16_t counter = 1024;  // "exhausted": take a chunk on first use
};
thread_local Generator tls_generator;

std::uint64_t now_seconds() {
  // The coarse clock is a vDSO read without a syscall; second resolution is all the layout keeps.
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec);
}
}  // namespace

void TraceId::set_node_no(std::uint16_t node_no) { g_node_no.store(node_no, std::memory_order_relaxed); }

TraceId TraceId::generate() {
  Generator& g = tls_generator;
  if (g.counter > 1023) {
    g.chunk_no = static_cast<std::uint16_t>(g_next_chunk.fetch_add(1, std::memory_order_relaxed) & 0xfff);
    g.counter = 1;
  }
  return compose(now_seconds(), g_node_no.load(std::memory_order_relaxed), g.chunk_no, g.counter++);
}

}  // namespace elfin
