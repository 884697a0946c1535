// The file layer: every byte the WAL reads or writes, and every create, rename, delete and
// directory fsync, goes through these two interfaces. `PosixFileSystem` is the real one;
// `FaultFileSystem` wraps it to inject errors and to model a power loss, so the crash tests run
// the same writer and recovery code as production.
//
// Calls return the errno of the failed system call; they never throw for an I/O failure.
// Paths are plain strings (a directory and a file name are joined by the caller).
//
// Thread safety: a `File` is used by one thread at a time. `PosixFileSystem` may be shared;
// `FaultFileSystem` may not (its model is not locked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <elfin/result.hpp>
#include <elfin/wal/error.hpp>

namespace elfin::wal {

template <class T>
using IoResult = elfin::Result<T, Errno>;

/// One open file. Closed when destroyed.
class File {
 public:
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  virtual ~File() = default;

  /// Reads up to `out.size()` bytes at `offset`; fewer only at the end of the file.
  [[nodiscard]] virtual IoResult<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) = 0;
  /// Writes all of `data` at `offset`. On an error part of it may have been written.
  [[nodiscard]] virtual IoResult<void> write_at(std::uint64_t offset, std::span<const std::byte> data) = 0;
  /// fdatasync: the data written so far, and the size, are on stable storage when this returns.
  [[nodiscard]] virtual IoResult<void> sync() = 0;
  /// Sets the size; bytes past it are gone, bytes added read as zeros.
  [[nodiscard]] virtual IoResult<void> truncate(std::uint64_t size) = 0;
  /// Reserves blocks for [0, size) (posix_fallocate): later writes there cannot fail for space.
  [[nodiscard]] virtual IoResult<void> allocate(std::uint64_t size) = 0;
  [[nodiscard]] virtual IoResult<std::uint64_t> size() = 0;
};

enum class OpenMode : std::uint8_t {
  Read,         ///< read only; the file must exist
  ReadWrite,    ///< the file must exist
  CreateNew,    ///< create it; fails if it exists (O_EXCL)
  CreateTrunc,  ///< create it or empty it
};

class FileSystem {
 public:
  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  [[nodiscard]] virtual IoResult<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) = 0;
  /// The names (not paths) of the regular files in `dir`, sorted.
  [[nodiscard]] virtual IoResult<std::vector<std::string>> list(const std::string& dir) = 0;
  /// Creates `dir` and its parents if missing.
  [[nodiscard]] virtual IoResult<void> create_dirs(const std::string& dir) = 0;
  /// rename(2): replaces `to` atomically. Durable only after `sync_dir`.
  [[nodiscard]] virtual IoResult<void> rename(const std::string& from, const std::string& to) = 0;
  /// unlink(2). Durable only after `sync_dir`.
  [[nodiscard]] virtual IoResult<void> remove(const std::string& path) = 0;
  /// fsync of the directory: the names created, renamed and removed in it are durable.
  [[nodiscard]] virtual IoResult<void> sync_dir(const std::string& dir) = 0;
};

/// `dir + "/" + name`.
[[nodiscard]] std::string join_path(const std::string& dir, const std::string& name);

}  // namespace elfin::wal
