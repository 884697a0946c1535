// SimDisk: one simulated node's disk, kept across the node's crashes and restarts. Its files are
// real files in a directory of their own, written through libs/wal's FaultFileSystem, so a crash
// of the node is a power loss: what was fdatasync'ed survives, the rest is undone (see
// elfin/wal/fault_file_system.hpp).
//
//   auto wal = elfin::actors::wal::blueprint({.file_system = [&](std::uint32_t) { return node.disk().file_system();
//   }}); config: [wal] dir = node.disk().dir()
//
// The fault layer is not thread-safe and a node may have several I/O threads (one per WAL actor),
// so the disk serializes every call into it with one lock; its files too.
//
// Thread safety: every member from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <elfin/wal/fault_file_system.hpp>
#include <elfin/wal/file_system.hpp>

namespace elfin::testing {

class SimDisk {
 public:
  /// A disk whose files live in `dir` (created if missing).
  explicit SimDisk(std::string dir);
  SimDisk(const SimDisk&) = delete;
  SimDisk& operator=(const SimDisk&) = delete;
  ~SimDisk();

  /// The directory the node's files go in (give it to the WAL actors' config as `dir`). Only the
  /// files directly in it are modelled by the power loss.
  [[nodiscard]] const std::string& dir() const;
  /// The file layer to give to the WAL actors (`Options::file_system`), shared by every user.
  [[nodiscard]] std::shared_ptr<elfin::wal::FileSystem> file_system() const;
  /// Runs `use` on the fault layer under the disk's lock: inject faults (fail_syncs, limit_space,
  /// ...) or read its counters.
  void with_faults(const std::function<void(elfin::wal::FaultFileSystem&)>& use);

  /// The power goes: from now on every mutating call fails with EIO and changes nothing.
  void cut_power();
  /// Back to the durable image (plus `torn_bytes` of each file's unsynced tail) and no faults.
  /// Every file opened through the disk must be closed first (the node's system is gone).
  void power_loss(std::uint64_t torn_bytes = 0);

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace elfin::testing
