#include "store.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include <elfin/wal/format.hpp>
#include <elfin/wal/segment_scan.hpp>

namespace elfin::actors::wal::internal {

namespace lw = elfin::wal;
using protocols::wal::PartitionId;

namespace {

lw::Error start_error(lw::ErrorKind kind, std::string path, std::string_view what, std::uint64_t expected,
                      std::uint64_t found) {
  lw::Error e;
  e.kind = kind;
  e.path = std::move(path);
  e.what = what;
  e.expected = expected;
  e.found = found;
  return e;
}

}  // namespace

Store::Store(lw::FileSystem& fs, StoreOptions options, lw::Writer writer)
    : fs_(&fs), options_(std::move(options)), writer_(std::move(writer)) {}

lw::WalResult<std::unique_ptr<Store>> Store::open(lw::FileSystem& fs, const StoreOptions& options) {
  // A segment of a WAL id this count does not have: the directory was written with a larger
  // wal_count, and the partitions in it would be served by the wrong WAL (or by none).
  if (auto made = fs.create_dirs(options.dir); !made) {
    return Err{lw::io_error(lw::ErrorKind::IoFailed, lw::IoOp::List, made.error(), options.dir)};
  }
  auto names = fs.list(options.dir);
  if (!names) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::List, names.error(), options.dir)};
  // Every WAL checks every WAL id's first segment before it creates anything: a start with the
  // wrong count must not leave files behind that the right count would then refuse.
  std::map<std::uint32_t, std::string> first_of;
  for (const auto& name : *names) {
    const auto parsed = lw::parse_segment_file_name(name);
    if (!parsed) continue;
    if (parsed->wal_id >= options.wal_count) {
      return Err{start_error(lw::ErrorKind::Mismatch, lw::join_path(options.dir, name),
                             "wal_count: a segment of a WAL id at or past wal_count (expected: the count, found: "
                             "the id); the directory was written with a larger wal_count",
                             options.wal_count, parsed->wal_id)};
    }
    first_of.try_emplace(parsed->wal_id, name);  // names are sorted: the oldest segment first
  }
  for (const auto& [wal_id, name] : first_of) {
    const std::string path = lw::join_path(options.dir, name);
    auto file = fs.open(path, lw::OpenMode::Read);
    if (!file) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Open, file.error(), path)};
    std::array<std::byte, lw::kSegmentHeaderBytes> header{};
    auto n = (*file)->read_at(0, header);
    if (!n) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Read, n.error(), path)};
    if (*n < header.size()) continue;  // a short header: that WAL's own recovery deals with it
    const auto decoded = lw::decode_segment_header(header);
    if (decoded.check == lw::HeaderCheck::Ok && decoded.header.wal_count != options.wal_count) {
      return Err{start_error(lw::ErrorKind::Mismatch, path,
                             "wal_count: the directory was written with another wal_count (expected: the config's, "
                             "found: the segment's)",
                             options.wal_count, decoded.header.wal_count)};
    }
  }

  lw::RecoveryOptions recovery_options;
  recovery_options.dir = options.dir;
  recovery_options.wal_id = options.wal_id;
  recovery_options.wal_count = options.wal_count;
  recovery_options.max_payload_bytes = options.writer.max_payload_bytes;
  recovery_options.keep_entries = false;  // the index below points into the files instead
  auto recovered = lw::recover(fs, recovery_options);
  if (!recovered) return Err{std::move(recovered).error()};
  auto writer = lw::Writer::open(fs, std::move(recovered->log), options.writer);
  if (!writer) return Err{std::move(writer).error()};
  std::unique_ptr<Store> store(new Store(fs, options, std::move(*writer)));
  if (auto built = store->build_index(); !built) return Err{std::move(built).error()};
  return store;
}

void Store::index_record(std::uint16_t type, std::uint64_t partition, const Location& at,
                         std::span<const std::byte> payload) {
  if (type == kHardStateType) {
    // Recovery checked the length of every hard-state record it read, and the actor writes 24 bytes.
    if (const auto state = lw::decode_hard_state(payload)) hard_states_[partition] = {*state, at.segment_no};
    return;
  }
  if (type == kCheckpointType) {
    auto& checkpoint = checkpoints_[partition];
    checkpoint = std::max(checkpoint, at.index);
    checkpoint_segments_[partition] = at.segment_no;
    if (auto it = logs_.find(partition); it != logs_.end()) {
      auto& entries = it->second.entries;
      entries.erase(entries.begin(), std::upper_bound(entries.begin(), entries.end(), checkpoint,
                                                      [](std::uint64_t i, const Location& l) { return i < l.index; }));
    }
    return;
  }
  Log& log = logs_[partition];
  auto& entries = log.entries;
  if (type == kTruncateType) {
    entries.erase(std::upper_bound(entries.begin(), entries.end(), at.index,
                                   [](std::uint64_t index, const Location& l) { return index < l.index; }),
                  entries.end());
    if (at.index < log.last_index) {
      log.last_index = at.index;
      log.last_term = entries.empty() || entries.back().index != at.index ? 0 : entries.back().term;
    }
    return;
  }
  if (!entries.empty() && at.index <= entries.back().index) {
    entries.erase(std::lower_bound(entries.begin(), entries.end(), at.index,
                                   [](const Location& l, std::uint64_t index) { return l.index < index; }),
                  entries.end());
  }
  const auto checkpoint = checkpoints_.find(partition);
  if (checkpoint == checkpoints_.end() || at.index > checkpoint->second) entries.push_back(at);
  log.last_index = at.index;
  log.last_term = at.term;
}

lw::WalResult<void> Store::build_index() {
  std::vector<std::byte> bytes;
  for (const lw::SegmentInfo& info : writer_.log().segments) {
    // Recovery classified and repaired this file; up to end_offset it holds valid records only.
    // Reading no further skips the preallocated zeros (most of a new segment).
    auto file = fs_->open(info.path, lw::OpenMode::Read);
    if (!file) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Open, file.error(), info.path)};
    bytes.resize(info.end_offset);
    auto n = (*file)->read_at(0, bytes);
    if (!n) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Read, n.error(), info.path)};
    bytes.resize(*n);
    const lw::SegmentScan scan = lw::scan_segment(bytes, options_.writer.max_payload_bytes);
    for (const lw::ScannedRecord& record : scan.records) {
      if (record.offset >= info.end_offset) break;
      const lw::RecordHeader& h = record.header;
      index_record(h.type, h.partition, Location{h.index, h.term, info.segment_no, record.offset, h.payload_len},
                   std::span<const std::byte>(bytes).subspan(record.offset + lw::kRecordHeaderBytes, h.payload_len));
    }
  }
  return {};
}

lw::WalResult<lw::Durable> Store::commit(std::span<const lw::Record> records) {
  // The actor refuses oversized entries before they get here; checked again first, because a
  // record refused half way would leave the ones before it encoded for the next commit.
  for (const lw::Record& record : records) {
    if (record.payload.size() > options_.writer.max_payload_bytes) {
      lw::Error e = start_error(lw::ErrorKind::RecordTooLarge, options_.dir, "payload over max_payload_bytes",
                                options_.writer.max_payload_bytes, record.payload.size());
      e.partition = record.partition;
      return Err{std::move(e)};
    }
  }
  for (const lw::Record& record : records) {
    // Only a writer that failed earlier refuses here, and it encodes nothing.
    if (auto appended = writer_.append(record); !appended) return Err{std::move(appended).error()};
  }
  auto durable = writer_.commit();
  if (!durable) return durable;
  // The batch was written as one block at the end of its segment; walk it to index each record.
  std::uint64_t offset = writer_.log().segments.back().end_offset - durable->bytes;
  for (const lw::Record& record : records) {
    index_record(record.type, record.partition,
                 Location{record.index, record.term, durable->segment_no, offset,
                          static_cast<std::uint32_t>(record.payload.size())},
                 record.payload);
    offset += lw::record_bytes(record.payload.size());
  }
  return durable;
}

const lw::SegmentInfo* Store::segment(std::uint64_t segment_no) const {
  for (const auto& s : writer_.log().segments) {
    if (s.segment_no == segment_no) return &s;
  }
  return nullptr;
}

lw::WalResult<protocols::wal::Range> Store::read(const protocols::wal::ReadRange& request) {
  protocols::wal::Range out;
  out.partition = request.partition;
  if (const auto saved = hard_states_.find(request.partition); saved != hard_states_.end()) {
    out.hard_state = {saved->second.state.term, saved->second.state.vote, saved->second.state.commit};
  }
  const auto it = logs_.find(request.partition);
  if (it == logs_.end()) return out;
  const Log& log = it->second;
  out.last_index = log.last_index;
  out.last_term = log.last_term;
  if (log.entries.empty()) return out;
  out.first_index = log.entries.front().index;

  std::map<std::uint64_t, std::unique_ptr<lw::File>> files;
  std::uint64_t bytes = 0;
  auto from = std::lower_bound(log.entries.begin(), log.entries.end(), request.from,
                               [](const Location& l, std::uint64_t index) { return l.index < index; });
  std::vector<std::byte> buffer;
  for (; from != log.entries.end() && from->index <= request.to; ++from) {
    if (request.max_bytes != 0 && !out.entries.empty() && bytes + from->payload_len > request.max_bytes) break;
    const lw::SegmentInfo* info = segment(from->segment_no);
    if (info == nullptr) {
      return Err{start_error(lw::ErrorKind::ReadFailed, options_.dir, "the segment of an indexed entry is gone",
                             from->segment_no, 0)};
    }
    auto& file = files[from->segment_no];
    if (!file) {
      auto opened = fs_->open(info->path, lw::OpenMode::Read);
      if (!opened) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Open, opened.error(), info->path)};
      file = std::move(*opened);
    }
    buffer.resize(lw::kRecordHeaderBytes + from->payload_len);
    auto n = file->read_at(from->offset, buffer);
    if (!n) return Err{lw::io_error(lw::ErrorKind::ReadFailed, lw::IoOp::Read, n.error(), info->path, from->offset)};
    const auto header = lw::decode_record_header(std::span(buffer).first<lw::kRecordHeaderBytes>());
    if (*n != buffer.size() || header.crc != lw::record_crc(buffer) || header.index != from->index ||
        header.partition != request.partition) {
      lw::Error e = start_error(lw::ErrorKind::CorruptRecord, info->path, "an indexed record reads back damaged", 0, 0);
      e.offset = from->offset;
      e.partition = request.partition;
      return Err{std::move(e)};
    }
    const auto* payload = reinterpret_cast<const std::uint8_t*>(buffer.data() + lw::kRecordHeaderBytes);
    out.entries.push_back({from->term, from->index, protocols::wal::Payload(payload, payload + from->payload_len)});
    bytes += from->payload_len;
  }
  return out;
}

lw::WalResult<std::uint64_t> Store::checkpoint(PartitionId partition, std::uint64_t index) {
  const auto known = checkpoints_.find(partition);
  const std::uint64_t at = known == checkpoints_.end() ? index : std::max(known->second, index);
  if (auto written = write_checkpoint(partition, at); !written) return Err{std::move(written).error()};
  auto retired = writer_.retire(checkpoints_);
  if (!retired) return Err{std::move(retired).error()};
  return static_cast<std::uint64_t>(retired->size());
}

lw::WalResult<void> Store::write_checkpoint(PartitionId partition, std::uint64_t index) {
  const std::uint64_t newest = writer_.log().segments.back().segment_no;
  // The payloads first, so that the records' spans point at storage that stays put.
  std::vector<std::array<std::byte, lw::kHardStateBytes>> payloads;
  payloads.reserve(hard_states_.size());
  std::vector<lw::Record> records;
  for (const auto& [other, saved] : hard_states_) {
    if (saved.segment_no == newest) continue;
    payloads.push_back(lw::encode_hard_state(saved.state));
    records.push_back({kHardStateType, other, saved.state.term, 0, payloads.back()});
  }
  for (const auto& [other, segment_no] : checkpoint_segments_) {
    if (segment_no != newest && other != partition)
      records.push_back({kCheckpointType, other, 0, checkpoints_.at(other), {}});
  }
  records.push_back({kCheckpointType, partition, 0, index, {}});
  auto durable = commit(records);
  if (!durable) return Err{std::move(durable).error()};
  return {};
}

std::map<PartitionId, PartitionEnd> Store::ends() const {
  std::map<PartitionId, PartitionEnd> out;
  for (const auto& [partition, log] : logs_) {
    if (log.last_index != 0) out[partition] = {log.last_index, log.last_term};
  }
  return out;
}

}  // namespace elfin::actors::wal::internal
