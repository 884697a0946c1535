#include <elfin/hashing/jump_hash.hpp>

#include <cassert>
#include <cfloat>

// Every client must route a key to the same shard, so the double steps below must be IEEE-754
// double operations rounded one at a time: not reassociated or contracted (-ffast-math), not
// carried out in x87 extended precision.
#if defined(__FAST_MATH__)
#error "jump_hash.cpp must not be compiled with -ffast-math: clients would disagree on shards"
#endif
static_assert(FLT_EVAL_METHOD == 0, "jump_hash needs double arithmetic in double precision (SSE2, not x87)");

namespace elfin::hashing {

std::uint32_t jump_hash(std::uint64_t key, std::uint32_t buckets) noexcept {
  assert(buckets >= 1 && buckets <= kMaxJumpBuckets);
  // b is the bucket the key is in so far; j the next bucket count at which it would jump. The
  // multiplier is the paper's 64-bit linear congruential step (wrapping modulo 2^64 on purpose),
  // and (key >> 33) + 1 is in [1, 2^31], so j < 2^31 * 2^31 stays exact enough and inside int64.
  std::int64_t b = -1;
  std::int64_t j = 0;
  while (j < static_cast<std::int64_t>(buckets)) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<std::int64_t>(static_cast<double>(b + 1) *
                                  (static_cast<double>(std::int64_t{1} << 31) / static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<std::uint32_t>(b);
}

}  // namespace elfin::hashing
