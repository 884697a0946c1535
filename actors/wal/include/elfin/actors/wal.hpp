// The WAL actors: a write-ahead log shared by many partitions, `wal_count` actors per node, with
// group commit. Partition p is served by WAL actor `p % wal_count` (the group's router keys by
// it); the protocol is elfin/protocols/wal.hpp and the config elfin/actors/wal/config.hpp.
//
// Each WAL actor recovers its segments before it answers anything (requests wait meanwhile);
// then it collects appends from all its partitions into batches, one write and one fdatasync per
// batch, on an I/O thread of its own, and answers every waiter of a batch after its fdatasync.
// An fdatasync error fails the batch and the WAL (WalFailed until restarted); ENOSPC rejects the
// batch only. Terminating flushes, syncs and answers every waiter; later requests get
// ShuttingDown. The group starts every WAL actor when the system starts.
//
// Thread safety: `blueprint` from any thread; the file layer factory is called from the actors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <string_view>

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/wal/file_system.hpp>

namespace elfin::actors::wal {

/// The file layer a WAL actor uses for every file operation, given its WAL id. Each WAL actor
/// uses its own only from its I/O thread.
using FileSystemFactory = std::function<std::shared_ptr<elfin::wal::FileSystem>(std::uint32_t wal_id)>;

struct Options {
  /// Null: the real file system (libs/wal's PosixFileSystem). Tests inject faults here.
  FileSystemFactory file_system;
};

/// The group's blueprint; mount it as e.g. `topology.local("wal").mount(elfin::actors::wal::blueprint())`
/// and route `protocols::wal` messages to it.
[[nodiscard]] Blueprint blueprint(Options options = {});

inline constexpr std::string_view kBlueprintName = "wal.wal";
/// Registers the group (the real file system) as "wal.wal", for topology files.
void register_blueprints(BlueprintRegistry& registry);

/// The WAL actor serving `partition`.
[[nodiscard]] constexpr std::uint32_t wal_for(protocols::wal::PartitionId partition, std::uint32_t wal_count) {
  return static_cast<std::uint32_t>(partition % wal_count);
}

}  // namespace elfin::actors::wal
