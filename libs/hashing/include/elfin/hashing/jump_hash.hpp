// The jump consistent hash (Lamping & Veach, 2014): maps a 64-bit key to one of `buckets` buckets
// with no table, and when the bucket count grows from n to n + 1 a key either stays or moves to
// the new bucket n (about 1/(n+1) of the keys move). Buckets can only be added or removed at the
// end, which suits a fixed count of virtual shards, not a changing set of nodes.
//
// The step uses IEEE-754 double arithmetic exactly as the paper does; builds with -ffast-math or
// x87 extended precision would route some keys differently from other clients.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

namespace elfin::hashing {

/// The largest bucket count `jump_hash` takes: the paper's int32 range, which also keeps the
/// double-to-integer step inside int64.
inline constexpr std::uint32_t kMaxJumpBuckets = 0x7FFF'FFFF;

/// The bucket of `key`, in [0, buckets). Precondition: 1 <= buckets <= kMaxJumpBuckets
/// (ShardFunction checks it once, where the count is configured).
[[nodiscard]] std::uint32_t jump_hash(std::uint64_t key, std::uint32_t buckets) noexcept;

}  // namespace elfin::hashing
