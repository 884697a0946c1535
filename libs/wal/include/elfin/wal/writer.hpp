// The WAL writer: appends records to the newest segment, one write and one fdatasync per commit,
// and rotates, preallocates and retires segment files.
//
// The caller forms the batches: `append` only encodes a record into memory; `commit` writes all
// appended records with one write and makes them durable with one fdatasync, and only then
// reports them as durable. Nothing appended is durable, or may be acknowledged, before the
// `commit` that covers it returned success.
//
// Failures of a commit:
//   NoSpace / WriteFailed  the batch is rejected: the segment is truncated back to where the
//                          batch began (and that is synced), so no partial record stays behind.
//                          The writer stays usable; a later commit succeeds once space returns.
//   SyncFailed             the fdatasync (or a directory fsync) failed. The batch may or may not
//                          be on disk, and after a failed fsync the kernel may have dropped the
//                          pages, so a retry proves nothing: the writer is failed for good and
//                          every later call returns WriterFailed. Reopen (recover) to go on.
//
// Segments: a commit that would take the newest segment past `segment_bytes` first rotates to a
// new one (a batch is never split, so a segment is larger only when one batch is). Rotation:
// create `<name>.tmp`, preallocate, write the header, fdatasync, rename to `<name>`, fsync the
// directory; records go in only after that, so an acknowledged record's file name survives a
// crash. `retire` deletes the oldest segments whose records every partition has checkpointed.
//
// Thread safety: one thread at a time (the WAL actor's I/O thread). The FileSystem must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <elfin/wal/error.hpp>
#include <elfin/wal/file_system.hpp>
#include <elfin/wal/record.hpp>
#include <elfin/wal/recovery.hpp>

namespace elfin::wal {

struct WriterOptions {
  std::uint64_t segment_bytes = 64u << 20;      ///< rotate before a batch would go past this
  bool preallocate = true;                      ///< fallocate each new segment to segment_bytes
  std::uint64_t max_payload_bytes = 16u << 20;  ///< larger appends fail with RecordTooLarge
};

/// What a successful commit made durable: records [first_sequence, end_sequence).
struct Durable {
  std::uint64_t first_sequence = 0;
  std::uint64_t end_sequence = 0;
  std::uint64_t bytes = 0;       ///< bytes written (headers and padding included)
  std::uint64_t segment_no = 0;  ///< the segment they are in
  bool rotated = false;          ///< a new segment was started for them
};

class Writer {
 public:
  /// Continues the log recovery returned (creating the first segment of an empty WAL).
  [[nodiscard]] static WalResult<Writer> open(FileSystem& fs, LogState log, const WriterOptions& options);

  Writer(Writer&&) noexcept = default;
  Writer& operator=(Writer&&) noexcept = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() = default;

  /// Encodes `record` into the pending batch and returns its sequence. Not durable yet.
  [[nodiscard]] WalResult<std::uint64_t> append(const Record& record);
  /// Writes the pending batch and fdatasyncs it (see above). An empty batch does nothing.
  [[nodiscard]] WalResult<Durable> commit();
  /// Deletes the oldest segments (never the newest) in which every partition's last index is at or
  /// below its checkpoint (`checkpoints`: partition -> index covered by a durable checkpoint; a
  /// partition missing from it keeps its segments). Returns the numbers of the deleted segments.
  [[nodiscard]] WalResult<std::vector<std::uint64_t>> retire(const std::map<std::uint64_t, std::uint64_t>& checkpoints);

  [[nodiscard]] bool failed() const noexcept { return failed_.has_value(); }
  [[nodiscard]] std::uint64_t pending_records() const noexcept { return batch_records_; }
  [[nodiscard]] std::uint64_t pending_bytes() const noexcept { return buffer_.size(); }
  [[nodiscard]] std::uint64_t next_sequence() const noexcept { return log_.next_sequence + batch_records_; }
  /// The segments and where the durable log ends.
  [[nodiscard]] const LogState& log() const noexcept { return log_; }

 private:
  Writer(FileSystem& fs, LogState log, const WriterOptions& options);
  WalResult<void> rotate();
  Error fail(Error error);
  void reject_batch();

  FileSystem* fs_;
  WriterOptions options_;
  LogState log_;
  std::unique_ptr<File> active_;  ///< the newest segment (log_.segments.back())
  std::uint64_t offset_ = 0;      ///< where the next batch goes in it
  std::vector<std::byte> buffer_;
  std::uint64_t batch_records_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> batch_indexes_;  ///< (partition, index) per record
  std::optional<Error> failed_;
};

}  // namespace elfin::wal
