#include <elfin/wal/writer.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include <elfin/wal/format.hpp>

namespace elfin::wal {

Writer::Writer(FileSystem& fs, LogState log, const WriterOptions& options)
    : fs_(&fs), options_(options), log_(std::move(log)) {}

WalResult<Writer> Writer::open(FileSystem& fs, LogState log, const WriterOptions& options) {
  if (!log.writable) {
    Error e;
    e.kind = ErrorKind::NotRepaired;
    e.path = log.dir;
    e.what = "recovered with repair = false, and a torn tail is still on disk";
    return Err{std::move(e)};
  }
  Writer writer(fs, std::move(log), options);
  if (writer.log_.segments.empty()) {
    if (auto r = writer.rotate(); !r) return Err{std::move(r).error()};
    return writer;
  }
  const SegmentInfo& last = writer.log_.segments.back();
  auto file = fs.open(last.path, OpenMode::ReadWrite);
  if (!file) return Err{io_error(ErrorKind::IoFailed, IoOp::Open, file.error(), last.path)};
  writer.active_ = std::move(*file);
  writer.offset_ = last.end_offset;
  if (options.preallocate) {
    // Best effort: a full disk here shows up as NoSpace on the first commit that needs the space.
    std::ignore = writer.active_->allocate(std::max(options.segment_bytes, last.end_offset));
  }
  return writer;
}

WalResult<std::uint64_t> Writer::append(const Record& record) {
  if (failed_) {
    Error e;
    e.kind = ErrorKind::WriterFailed;
    e.cause = failed_->kind;
    e.path = failed_->path;
    return Err{std::move(e)};
  }
  if (record.payload.size() > options_.max_payload_bytes) {
    Error e;
    e.kind = ErrorKind::RecordTooLarge;
    e.partition = record.partition;
    e.expected = options_.max_payload_bytes;
    e.found = record.payload.size();
    return Err{std::move(e)};
  }
  if (record.type == 0) {
    Error e;
    e.kind = ErrorKind::InvalidRecord;
    e.partition = record.partition;
    e.what = "record type 0 is reserved";
    return Err{std::move(e)};
  }
  const std::uint64_t sequence = log_.next_sequence + batch_records_;
  const std::size_t at = buffer_.size();
  buffer_.resize(at + record_bytes(record.payload.size()));
  encode_record(record, sequence, static_cast<std::uint32_t>(batch_records_), std::span(buffer_).subspan(at));
  batch_indexes_.emplace_back(record.partition, record.index);
  ++batch_records_;
  return sequence;
}

Error Writer::fail(Error error) {
  failed_ = error;
  reject_batch();
  return error;
}

void Writer::reject_batch() {
  buffer_.clear();
  batch_indexes_.clear();
  batch_records_ = 0;
}

WalResult<Durable> Writer::commit() {
  if (failed_) {
    Error e;
    e.kind = ErrorKind::WriterFailed;
    e.cause = failed_->kind;
    e.path = failed_->path;
    reject_batch();
    return Err{std::move(e)};
  }
  Durable durable;
  durable.first_sequence = log_.next_sequence;
  durable.end_sequence = log_.next_sequence;
  if (batch_records_ == 0) {
    durable.segment_no = log_.segments.empty() ? 0 : log_.segments.back().segment_no;
    return durable;
  }
  const bool has_records = !log_.segments.empty() && log_.segments.back().records > 0;
  if (!active_ || (has_records && offset_ + buffer_.size() > options_.segment_bytes)) {
    if (auto r = rotate(); !r) {
      reject_batch();
      return Err{std::move(r).error()};
    }
    durable.rotated = true;
  }
  SegmentInfo& segment = log_.segments.back();

  if (auto w = active_->write_at(offset_, buffer_); !w) {
    Error error = io_error(ErrorKind::WriteFailed, IoOp::Write, w.error(), segment.path, offset_);
    // Part of the batch may be in the file: cut it off and make the cut durable, so no partial
    // record is left for a later batch to be written after (RocksDB #6316). If that fails too,
    // the file's state is unknown and the writer cannot go on.
    if (auto t = active_->truncate(offset_); !t) {
      return Err{fail(io_error(ErrorKind::IoFailed, IoOp::Truncate, t.error(), segment.path, offset_))};
    }
    if (auto s = active_->sync(); !s) {
      return Err{fail(io_error(ErrorKind::SyncFailed, IoOp::Sync, s.error(), segment.path, offset_))};
    }
    reject_batch();
    return Err{std::move(error)};
  }
  if (auto s = active_->sync(); !s) {
    return Err{fail(io_error(ErrorKind::SyncFailed, IoOp::Sync, s.error(), segment.path, offset_))};
  }

  durable.bytes = buffer_.size();
  durable.end_sequence = log_.next_sequence + batch_records_;
  durable.segment_no = segment.segment_no;
  offset_ += buffer_.size();
  segment.end_offset = offset_;
  segment.records += batch_records_;
  for (const auto& [partition, index] : batch_indexes_) {
    auto [it, fresh] = segment.partitions.try_emplace(partition, IndexRange{index, index, 0});
    it->second.first = std::min(it->second.first, index);
    it->second.last = std::max(it->second.last, index);
    ++it->second.records;
  }
  log_.next_sequence = durable.end_sequence;
  reject_batch();  // the batch is done: clear it for the next one
  return durable;
}

WalResult<void> Writer::rotate() {
  const std::uint64_t number = log_.segments.empty() ? log_.next_segment_no : log_.segments.back().segment_no + 1;
  const std::string path = join_path(log_.dir, segment_file_name(log_.wal_id, number));
  const std::string temp = path + std::string(kTempSuffix);
  // Until the rename, the new segment has no name recovery reads; a failure before it leaves a
  // temporary file behind at worst, which the next recovery deletes.
  auto cleanup = [&] { std::ignore = fs_->remove(temp); };

  auto file = fs_->open(temp, OpenMode::CreateTrunc);
  if (!file) return Err{io_error(ErrorKind::IoFailed, IoOp::Open, file.error(), temp)};
  if (options_.preallocate) {
    if (auto a = (*file)->allocate(options_.segment_bytes); !a) {
      cleanup();
      return Err{io_error(ErrorKind::IoFailed, IoOp::Allocate, a.error(), temp)};
    }
  }
  SegmentHeader header;
  header.wal_id = log_.wal_id;
  header.wal_count = log_.wal_count;
  header.segment_no = number;
  header.first_sequence = log_.next_sequence;
  std::array<std::byte, kSegmentHeaderBytes> bytes{};
  encode_segment_header(header, bytes);
  if (auto w = (*file)->write_at(0, bytes); !w) {
    cleanup();
    return Err{io_error(ErrorKind::WriteFailed, IoOp::Write, w.error(), temp)};
  }
  if (auto s = (*file)->sync(); !s) return Err{fail(io_error(ErrorKind::SyncFailed, IoOp::Sync, s.error(), temp))};
  if (auto r = fs_->rename(temp, path); !r) {
    cleanup();
    return Err{io_error(ErrorKind::IoFailed, IoOp::Rename, r.error(), temp)};
  }
  if (auto s = fs_->sync_dir(log_.dir); !s) {
    return Err{fail(io_error(ErrorKind::SyncFailed, IoOp::SyncDir, s.error(), log_.dir))};
  }

  active_ = std::move(*file);
  offset_ = kSegmentHeaderBytes;
  SegmentInfo info;
  info.segment_no = number;
  info.path = path;
  info.first_sequence = header.first_sequence;
  info.end_offset = offset_;
  log_.segments.push_back(std::move(info));
  log_.next_segment_no = number + 1;
  return {};
}

WalResult<std::vector<std::uint64_t>> Writer::retire(const std::map<std::uint64_t, std::uint64_t>& checkpoints) {
  std::vector<std::uint64_t> removed;
  if (failed_) {
    Error e;
    e.kind = ErrorKind::WriterFailed;
    e.cause = failed_->kind;
    return Err{std::move(e)};
  }
  auto covered = [&](const SegmentInfo& segment) {
    return std::all_of(segment.partitions.begin(), segment.partitions.end(), [&](const auto& entry) {
      const auto it = checkpoints.find(entry.first);
      return it != checkpoints.end() && it->second >= entry.second.last;
    });
  };
  // Oldest first, and the directory synced after each: a crash in between leaves a shorter log
  // that still starts at a segment boundary, never a hole.
  while (log_.segments.size() > 1 && covered(log_.segments.front())) {
    const SegmentInfo& oldest = log_.segments.front();
    if (auto r = fs_->remove(oldest.path); !r)
      return Err{io_error(ErrorKind::IoFailed, IoOp::Remove, r.error(), oldest.path)};
    if (auto s = fs_->sync_dir(log_.dir); !s) {
      return Err{fail(io_error(ErrorKind::SyncFailed, IoOp::SyncDir, s.error(), log_.dir))};
    }
    removed.push_back(oldest.segment_no);
    log_.segments.erase(log_.segments.begin());
  }
  return removed;
}

}  // namespace elfin::wal
