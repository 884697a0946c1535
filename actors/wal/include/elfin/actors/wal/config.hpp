// The WAL group's config: where the logs live, how many WAL actors share the partitions, and
// how commits are batched.
//
//   [wal]
//   dir = "/var/lib/elfin/wal"   # required; every WAL actor's segments go here
//   wal_count = 4                # WAL actors on this node; partition p uses WAL p % wal_count.
//                                # Stored in every segment header: a different count at start
//                                # is refused (partitions would land on another WAL)
//   segment_bytes = "64MiB"      # a new segment file when a batch would go past this
//   preallocate = true           # fallocate each new segment to segment_bytes
//   max_batch_bytes = "4MiB"     # a batch is written once it holds this many bytes ...
//   max_batch_entries = 4096     # ... or this many entries, even while a sync is running
//   linger = "0ms"               # when no sync runs: wait this long for more entries first
//   max_payload_bytes = "16MiB"  # larger entries are refused (TooLarge)
//
// A batch is written as soon as no sync is in flight (after `linger`, when set); what arrives
// meanwhile collects into the next batch, which goes out the moment the running sync ends. So at
// low load an append waits for one fdatasync, and under load batches grow by themselves. Right
// after a sync, a batch waits (at most half a sync) until as many requests as that sync answered
// are back, plus those that were already waiting, so that the first of them does not go out alone.
//
// A reload applies the batch limits and `linger` at once, and the file settings (segment_bytes,
// preallocate, max_payload_bytes) at the next start; `dir` and `wal_count` cannot change while the
// group runs (a reload that changes them is refused).
//
// Thread safety: a plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/config.hpp>
#include <elfin/duration.hpp>

namespace elfin::actors::wal {

struct Config {
  std::string dir;
  std::uint32_t wal_count = 4;
  ByteSize segment_bytes{64u << 20};
  bool preallocate = true;
  ByteSize max_batch_bytes{4u << 20};
  std::uint64_t max_batch_entries = 4096;
  std::chrono::microseconds linger{0};
  ByteSize max_payload_bytes{16u << 20};
  ELFIN_CONFIG(dir, wal_count, segment_bytes, preallocate, max_batch_bytes, max_batch_entries, linger,
               max_payload_bytes);
};

/// What is wrong with `config`, one sentence per problem naming the key; empty when it is valid.
[[nodiscard]] std::vector<std::string> validate(const Config& config);

/// What a reload from `before` to `after` may not change (dir, wal_count); empty when allowed.
[[nodiscard]] std::vector<std::string> validate_change(const Config& before, const Config& after);

}  // namespace elfin::actors::wal
