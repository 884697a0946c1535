// The WAL's errors: a kind to branch on plus the facts to report (file, byte offset, partition,
// errno). Every fallible call in libs/wal returns `Result<T, Error>`; nothing throws for an I/O
// failure or for damage on disk.
//
// What a kind tells the caller to do:
//   NoSpace, WriteFailed  the batch was rejected and rolled back; the writer stays usable.
//   SyncFailed            an fdatasync/fsync failed: the batch is not durable and the writer is now
//                         failed (after a failed fsync the kernel may have dropped the dirty pages,
//                         so a retry could "succeed" without the data). Reopen to go on.
//   WriterFailed          a call on a writer that already failed; `cause` says why it failed.
//   ReadFailed            recovery could not read a file; nothing was truncated or deleted.
//   CorruptRecord, CorruptHeader, Gap, Mismatch, UnsupportedVersion
//                         the log on disk is damaged or is another log; recovery stops here.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/result.hpp>

namespace elfin::wal {

enum class ErrorKind : std::uint8_t {
  NoSpace,             ///< ENOSPC writing or preallocating: batch rejected, nothing partial left
  WriteFailed,         ///< another write error: batch rejected, nothing partial left
  SyncFailed,          ///< fdatasync of a segment or fsync of the directory failed; writer failed
  WriterFailed,        ///< the writer failed earlier (see `cause`); it accepts nothing more
  IoFailed,            ///< another file operation failed (open, list, rename, remove, truncate)
  ReadFailed,          ///< a read failed during recovery or inspection; nothing was changed
  CorruptRecord,       ///< a bad record before the end of the log (not a torn tail)
  CorruptHeader,       ///< a segment header that does not check out
  Gap,                 ///< a missing segment or a break in the record sequence
  Mismatch,            ///< a segment of another WAL (id, wal_count) or with the wrong number
  UnsupportedVersion,  ///< a segment written in a format version this build cannot read
  RecordTooLarge,      ///< append: the payload is larger than `max_record_bytes`
  InvalidRecord,       ///< append: type 0, which the format reserves for "no record here"
  NotRepaired,         ///< Writer::open on a log recovered with `repair = false` that needs a repair
};

/// The file operation an I/O error came from.
enum class IoOp : std::uint8_t { None, Open, Read, Write, Sync, SyncDir, Truncate, Allocate, Rename, Remove, List };

/// An errno value from the file layer (0: none).
struct Errno {
  int value = 0;
  friend bool operator==(const Errno&, const Errno&) = default;
};

struct Error {
  ErrorKind kind = ErrorKind::IoFailed;
  IoOp op = IoOp::None;
  int sys_errno = 0;                       ///< errno of the failed call, 0 if none
  std::string path;                        ///< the file concerned, "" if none
  std::uint64_t offset = 0;                ///< byte offset in `path` (damage, failed read/write)
  std::optional<std::uint64_t> partition;  ///< the partition of the damaged record, if readable
  std::uint64_t expected = 0;              ///< Gap/Mismatch/RecordTooLarge: what was expected
  std::uint64_t found = 0;                 ///< ... and what was found
  std::optional<ErrorKind> cause;          ///< WriterFailed: the kind of error that failed it
  std::string_view what;                   ///< a fixed text naming the check that failed

  friend bool operator==(const Error&, const Error&) = default;
};

template <class T>
using WalResult = elfin::Result<T, Error>;

[[nodiscard]] std::string_view to_string(ErrorKind kind);
[[nodiscard]] std::string_view to_string(IoOp op);
/// One line: kind, what, file and offset, partition, errno text.
[[nodiscard]] std::string to_string(const Error& error);

/// An I/O error of `op` on `path` as the WAL reports it (ENOSPC on a write becomes NoSpace).
[[nodiscard]] Error io_error(ErrorKind kind, IoOp op, Errno err, std::string path, std::uint64_t offset = 0);

}  // namespace elfin::wal

template <>
struct fmt::formatter<elfin::wal::ErrorKind> : fmt::formatter<std::string_view> {
  auto format(elfin::wal::ErrorKind kind, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::wal::to_string(kind), ctx);
  }
};

template <>
struct fmt::formatter<elfin::wal::Error> : fmt::formatter<std::string_view> {
  auto format(const elfin::wal::Error& error, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::wal::to_string(error), ctx);
  }
};
