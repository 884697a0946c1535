// Helpers shared by the WAL tests: payloads, opening a WAL (recover + writer), writing and reading
// back records, raw file edits for damage.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/wal/format.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/writer.hpp>

#include "temp_dir.hpp"

namespace elfin::wal::test {

inline std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = static_cast<std::byte>(text[i]);
  return out;
}

/// A payload that names its record, of a length that varies with it (so records end at
/// different alignments).
inline std::string payload_text(std::uint64_t partition, std::uint64_t index, std::uint64_t term = 1) {
  return fmt::format("p{}-i{}-t{}{}", partition, index, term, std::string((partition * 7 + index * 3) % 23, 'x'));
}

/// One record to write in a test: which partition, index and term.
struct Spec {
  std::uint64_t partition = 0;
  std::uint64_t index = 0;
  std::uint64_t term = 1;
};

inline RecoveryOptions recovery_options(const std::string& dir, bool repair = true) {
  RecoveryOptions o;
  o.dir = dir;
  o.repair = repair;
  return o;
}

/// Small preallocated segments: the fault layer keeps a copy of every file in memory.
inline WriterOptions test_options() {
  WriterOptions o;
  o.segment_bytes = 64 << 10;
  return o;
}

/// Recovers the WAL in `dir` (REQUIREs success) and opens a writer on it.
struct Opened {
  Recovery recovery;
  Writer writer;
};
inline Opened open_wal(FileSystem& fs, const std::string& dir, const WriterOptions& options = test_options()) {
  auto recovered = recover(fs, recovery_options(dir));
  if (!recovered) FAIL("recovery failed: " << to_string(recovered.error()));
  auto writer = Writer::open(fs, recovered->log, options);
  if (!writer) FAIL("Writer::open failed: " << to_string(writer.error()));
  return Opened{std::move(*recovered), std::move(*writer)};
}

/// Recovers WAL `wal_id` of `wal_count` sharing `dir` and opens a writer on it; REQUIREs success.
inline Writer open_shared_wal(FileSystem& fs, const std::string& dir, std::uint32_t wal_id, std::uint32_t wal_count) {
  auto options = recovery_options(dir);
  options.wal_id = wal_id;
  options.wal_count = wal_count;
  auto recovered = recover(fs, options);
  if (!recovered) FAIL("recovery failed: " << to_string(recovered.error()));
  auto writer = Writer::open(fs, recovered->log, test_options());
  if (!writer) FAIL("Writer::open failed: " << to_string(writer.error()));
  return std::move(*writer);
}

/// Appends `specs` to `writer` and commits every `batch` records; REQUIREs success.
inline void write_all(Writer& writer, const std::vector<Spec>& specs, std::size_t batch = 1) {
  std::size_t in_batch = 0;
  for (const auto& s : specs) {
    const auto text = payload_text(s.partition, s.index, s.term);
    const auto payload = bytes_of(text);
    auto appended = writer.append(Record{1, s.partition, s.term, s.index, payload});
    if (!appended) FAIL("append failed: " << to_string(appended.error()));
    if (++in_batch == batch) {
      auto committed = writer.commit();
      if (!committed) FAIL("commit failed: " << to_string(committed.error()));
      in_batch = 0;
    }
  }
  if (in_batch > 0) {
    auto committed = writer.commit();
    if (!committed) FAIL("commit failed: " << to_string(committed.error()));
  }
}

/// A partition's recovered log as (index, term) pairs, each payload checked against its name.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>> indexes(const Recovery& r, std::uint64_t partition) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  const auto it = r.partitions.find(partition);
  if (it == r.partitions.end()) return out;
  for (const auto& e : it->second) {
    const auto expected = bytes_of(payload_text(partition, e.index, e.term));
    CHECK(e.payload == expected);
    out.emplace_back(e.index, e.term);
  }
  return out;
}

/// `n` records of one partition, indices 1..n, term 1.
inline std::vector<Spec> one_partition(std::uint64_t n, std::uint64_t partition = 0) {
  std::vector<Spec> out;
  for (std::uint64_t i = 1; i <= n; ++i) out.push_back({partition, i, 1});
  return out;
}

/// `per_partition` records for each of `partitions` partitions, interleaved round robin.
inline std::vector<Spec> interleaved(std::uint64_t partitions, std::uint64_t per_partition) {
  std::vector<Spec> out;
  for (std::uint64_t i = 1; i <= per_partition; ++i) {
    for (std::uint64_t p = 0; p < partitions; ++p) out.push_back({p, i, 1});
  }
  return out;
}

inline std::string segment_path(const std::string& dir, std::uint64_t segment_no, std::uint32_t wal_id = 0) {
  return join_path(dir, segment_file_name(wal_id, segment_no));
}

/// Reads, edits and writes back a whole file (for damage the tests inflict).
inline std::string read_all(const std::string& path) { return elfin::test::read_file(path); }
inline void write_all_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace elfin::wal::test
