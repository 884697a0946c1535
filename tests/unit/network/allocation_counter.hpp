// Counts heap allocations made by the calling thread, for tests that prove a hot path allocates
// nothing. The network test binary replaces the global operator new (allocation_counter.cpp).
#pragma once

#include <cstdint>

namespace elfin::test {
/// Allocations made so far by the calling thread.
[[nodiscard]] std::uint64_t allocations();
}  // namespace elfin::test
