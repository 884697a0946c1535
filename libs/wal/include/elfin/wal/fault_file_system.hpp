// A file layer for crash tests: it passes every call to a real FileSystem (the files are real
// files in a real directory) and keeps, beside them, a model of what a power loss would leave:
// each file's contents as of its last fdatasync, and each directory's names as of its last fsync.
//
//   power_loss()     puts the directory back to that durable image: unsynced writes, truncations
//                    and preallocations are undone, names created or renamed since the last
//                    directory fsync disappear, names removed since then come back. This models a
//                    power cut on a disk without a volatile cache that lies; the real thing cannot
//                    be done in a test, and `kill -9` alone proves nothing (the kernel still
//                    writes the page cache out).
//   power_loss(n)    the same, except that in each file the first n bytes of unsynced data (from
//                    the first byte that differs from the durable image) did reach the disk: a
//                    torn write.
//   fail_syncs / fail_writes / fail_reads   make those calls fail with an errno (EIO, ...):
//                    fdatasync and directory fsync; write and fallocate; a file's read_at.
//   limit_space(n)   lets files grow by n more bytes in total, then fails with ENOSPC; a write
//                    that crosses the limit writes what fits first, as a real one can.
//   crash_after(n)   the n+1-th mutating call from now on (create, write, sync, truncate,
//                    allocate, rename, remove, directory fsync) and every later one fail with EIO
//                    and change nothing: the machine is gone. Follow with power_loss().
//
// Only the files of `dir` are modelled; files there before construction count as durable.
// Every File opened through it must be destroyed before power_loss().
//
// Thread safety: one thread at a time (the model is not locked).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <elfin/wal/file_system.hpp>

namespace elfin::wal {

class FaultFileSystem final : public FileSystem {
 public:
  FaultFileSystem(FileSystem& real, std::string dir);
  ~FaultFileSystem() override;

  [[nodiscard]] IoResult<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override;
  [[nodiscard]] IoResult<std::vector<std::string>> list(const std::string& dir) override;
  [[nodiscard]] IoResult<void> create_dirs(const std::string& dir) override;
  [[nodiscard]] IoResult<void> rename(const std::string& from, const std::string& to) override;
  [[nodiscard]] IoResult<void> remove(const std::string& path) override;
  [[nodiscard]] IoResult<void> sync_dir(const std::string& dir) override;

  void fail_syncs(std::optional<Errno> err) { sync_error_ = err; }
  void fail_writes(std::optional<Errno> err) { write_error_ = err; }
  void fail_reads(std::optional<Errno> err) { read_error_ = err; }
  void limit_space(std::optional<std::uint64_t> bytes) { space_left_ = bytes; }
  void crash_after(std::optional<std::uint64_t> mutating_calls) { crash_after_ = mutating_calls; }
  /// Clears every injected fault.
  void clear_faults();

  /// Rewrites the real directory to the durable image, plus `torn_bytes` of each file's unsynced
  /// data (see above), and clears the faults.
  void power_loss(std::uint64_t torn_bytes = 0);

  [[nodiscard]] bool crashed() const noexcept { return crashed_; }
  [[nodiscard]] std::uint64_t mutating_calls() const noexcept { return mutating_calls_; }
  [[nodiscard]] std::uint64_t syncs() const noexcept { return syncs_; }

  /// The model's state of one file (for the File wrappers).
  struct Node;

 private:
  friend class FaultFile;
  // Counts a mutating call; false once the machine has "crashed".
  [[nodiscard]] bool admit();
  // Takes `growth` bytes of space; how many were granted.
  [[nodiscard]] std::uint64_t take_space(std::uint64_t growth);
  std::shared_ptr<Node> node_for(const std::string& path);
  [[nodiscard]] bool in_dir(const std::string& path) const;

  FileSystem* real_;
  std::string dir_;
  std::map<std::string, std::shared_ptr<Node>> names_;          ///< current names in dir_
  std::map<std::string, std::shared_ptr<Node>> durable_names_;  ///< names as of the last sync_dir
  std::optional<Errno> sync_error_;
  std::optional<Errno> write_error_;
  std::optional<Errno> read_error_;
  std::optional<std::uint64_t> space_left_;
  std::optional<std::uint64_t> crash_after_;
  bool crashed_ = false;
  std::uint64_t mutating_calls_ = 0;
  std::uint64_t syncs_ = 0;
};

}  // namespace elfin::wal
