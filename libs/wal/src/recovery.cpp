#include <elfin/wal/recovery.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include <elfin/wal/format.hpp>
#include <elfin/wal/hard_state.hpp>
#include <elfin/wal/segment_scan.hpp>

namespace elfin::wal {

WalResult<std::vector<std::byte>> read_whole_file(FileSystem& fs, const std::string& path) {
  auto file = fs.open(path, OpenMode::Read);
  if (!file) return Err{io_error(ErrorKind::ReadFailed, IoOp::Open, file.error(), path)};
  auto size = (*file)->size();
  if (!size) return Err{io_error(ErrorKind::ReadFailed, IoOp::Read, size.error(), path)};
  std::vector<std::byte> bytes(*size);
  auto n = (*file)->read_at(0, bytes);
  if (!n) return Err{io_error(ErrorKind::ReadFailed, IoOp::Read, n.error(), path)};
  bytes.resize(*n);  // a file that shrank since fstat is read as it is now
  return bytes;
}

std::optional<std::uint32_t> stored_wal_count(FileSystem& fs, const std::string& dir,
                                              std::optional<std::uint32_t> wal_id) {
  auto names = fs.list(dir);
  if (!names) return std::nullopt;
  for (const auto& name : *names) {
    const auto parsed = parse_segment_file_name(name);
    if (!parsed || (wal_id && parsed->wal_id != *wal_id)) continue;
    auto file = fs.open(join_path(dir, name), OpenMode::Read);
    if (!file) continue;
    std::array<std::byte, kSegmentHeaderBytes> bytes{};
    auto n = (*file)->read_at(0, bytes);
    if (!n || *n < bytes.size()) continue;
    const auto decoded = decode_segment_header(bytes);
    if (decoded.check == HeaderCheck::Ok) return decoded.header.wal_count;
  }
  return std::nullopt;
}

namespace {

Error damage(ErrorKind kind, std::string path, std::uint64_t offset, std::string_view what) {
  Error e;
  e.kind = kind;
  e.path = std::move(path);
  e.offset = offset;
  e.what = what;
  return e;
}

// Writes `bytes` to `path` and makes the copy durable before the original is touched.
WalResult<void> write_copy(FileSystem& fs, const std::string& dir, const std::string& path,
                           std::span<const std::byte> bytes) {
  auto file = fs.open(path, OpenMode::CreateTrunc);
  if (!file) return Err{io_error(ErrorKind::IoFailed, IoOp::Open, file.error(), path)};
  if (auto w = (*file)->write_at(0, bytes); !w)
    return Err{io_error(ErrorKind::WriteFailed, IoOp::Write, w.error(), path)};
  if (auto s = (*file)->sync(); !s) return Err{io_error(ErrorKind::SyncFailed, IoOp::Sync, s.error(), path)};
  if (auto s = fs.sync_dir(dir); !s) return Err{io_error(ErrorKind::SyncFailed, IoOp::SyncDir, s.error(), dir)};
  return {};
}

// etcd's rule: a record for an index already seen replaces it and everything after it.
void replay(std::vector<Entry>& log, Entry entry) {
  if (!log.empty() && entry.index <= log.back().index) {
    auto from = std::lower_bound(log.begin(), log.end(), entry.index,
                                 [](const Entry& e, std::uint64_t index) { return e.index < index; });
    log.erase(from, log.end());
  }
  log.push_back(std::move(entry));
}

// The same rule on indexes only (when payloads are not kept).
void replay_index(std::vector<std::uint64_t>& log, std::uint64_t index) {
  if (!log.empty() && index <= log.back()) log.erase(std::lower_bound(log.begin(), log.end(), index), log.end());
  log.push_back(index);
}

// A truncate record: the entries after `index` are gone.
void cut_after(std::vector<Entry>& log, std::uint64_t index) {
  log.erase(
      std::upper_bound(log.begin(), log.end(), index, [](std::uint64_t i, const Entry& e) { return i < e.index; }),
      log.end());
}
void cut_index_after(std::vector<std::uint64_t>& log, std::uint64_t index) {
  log.erase(std::upper_bound(log.begin(), log.end(), index), log.end());
}
void cut_up_to(std::vector<Entry>& log, std::uint64_t index) {
  log.erase(log.begin(), std::upper_bound(log.begin(), log.end(), index,
                                          [](std::uint64_t i, const Entry& e) { return i < e.index; }));
}
void cut_index_up_to(std::vector<std::uint64_t>& log, std::uint64_t index) {
  log.erase(log.begin(), std::upper_bound(log.begin(), log.end(), index));
}

struct Found {
  std::uint64_t segment_no;
  std::string name;
};

}  // namespace

WalResult<Recovery> recover(FileSystem& fs, const RecoveryOptions& options) {
  const std::string& dir = options.dir;
  if (options.repair) {
    if (auto made = fs.create_dirs(dir); !made)
      return Err{io_error(ErrorKind::IoFailed, IoOp::List, made.error(), dir)};
  }
  auto names = fs.list(dir);
  if (!names) return Err{io_error(ErrorKind::ReadFailed, IoOp::List, names.error(), dir)};

  std::vector<Found> segments;
  bool removed_temp = false;
  for (const auto& name : *names) {
    if (name.ends_with(kTempSuffix)) {
      const auto base = parse_segment_file_name(std::string_view(name).substr(0, name.size() - kTempSuffix.size()));
      if (base && base->wal_id == options.wal_id && options.repair) {
        // A rotation that did not finish: the file never had its final name, so nothing in it
        // was acknowledged.
        if (auto r = fs.remove(join_path(dir, name)); !r) {
          return Err{io_error(ErrorKind::IoFailed, IoOp::Remove, r.error(), join_path(dir, name))};
        }
        removed_temp = true;
      }
      continue;
    }
    const auto parsed = parse_segment_file_name(name);
    if (parsed && parsed->wal_id == options.wal_id) segments.push_back({parsed->segment_no, name});
  }
  if (removed_temp) {
    if (auto s = fs.sync_dir(dir); !s) return Err{io_error(ErrorKind::SyncFailed, IoOp::SyncDir, s.error(), dir)};
  }
  std::sort(segments.begin(), segments.end(),
            [](const Found& a, const Found& b) { return a.segment_no < b.segment_no; });

  Recovery out;
  out.log.dir = dir;
  out.log.wal_id = options.wal_id;
  out.log.wal_count = options.wal_count;
  std::optional<std::uint64_t> expected_sequence;
  std::map<std::uint64_t, std::vector<std::uint64_t>> indexes;  // keep_entries = false

  for (std::size_t i = 0; i < segments.size(); ++i) {
    const bool last = i + 1 == segments.size();
    const std::string path = join_path(dir, segments[i].name);
    if (i > 0 && segments[i].segment_no != segments[i - 1].segment_no + 1) {
      Error e = damage(ErrorKind::Gap, path, 0, "a segment is missing before this one");
      e.expected = segments[i - 1].segment_no + 1;
      e.found = segments[i].segment_no;
      return Err{std::move(e)};
    }
    auto bytes = read_whole_file(fs, path);
    if (!bytes) return Err{std::move(bytes).error()};
    const SegmentScan scan = scan_segment(*bytes, options.max_payload_bytes);

    if (scan.state == SegmentState::ShortHeader) {
      if (!last) return Err{damage(ErrorKind::CorruptHeader, path, 0, "segment shorter than its header")};
      Repair repair{Repair::Kind::ShortHeader, path, 0, bytes->size(), {}, "segment shorter than its header"};
      if (options.repair) {
        repair.damaged_copy = path + std::string(kDamagedSuffix);
        if (auto c = write_copy(fs, dir, repair.damaged_copy, *bytes); !c) return Err{std::move(c).error()};
        if (auto r = fs.remove(path); !r) return Err{io_error(ErrorKind::IoFailed, IoOp::Remove, r.error(), path)};
        if (auto s = fs.sync_dir(dir); !s) return Err{io_error(ErrorKind::SyncFailed, IoOp::SyncDir, s.error(), dir)};
      }
      out.log.writable = out.log.writable && options.repair;
      out.repairs.push_back(std::move(repair));
      // Its number is reused by the next rotation; its records (none) follow the last segment's.
      out.log.next_segment_no = segments[i].segment_no;
      break;
    }
    if (scan.state == SegmentState::BadHeader) {
      if (scan.header_check == HeaderCheck::BadVersion) {
        Error e = damage(ErrorKind::UnsupportedVersion, path, 8, "segment format version");
        e.expected = kFormatVersion;
        e.found = scan.header.version;
        return Err{std::move(e)};
      }
      return Err{damage(ErrorKind::CorruptHeader, path, 0,
                        scan.header_check == HeaderCheck::BadMagic ? "bad magic" : "header CRC mismatch")};
    }
    const SegmentHeader& h = scan.header;
    auto mismatch = [&](std::string_view what, std::uint64_t expected, std::uint64_t found) {
      Error e = damage(ErrorKind::Mismatch, path, 0, what);
      e.expected = expected;
      e.found = found;
      return Err{std::move(e)};
    };
    if (h.wal_id != options.wal_id) return mismatch("WAL id in the header", options.wal_id, h.wal_id);
    if (h.wal_count != options.wal_count) return mismatch("wal_count in the header", options.wal_count, h.wal_count);
    if (h.segment_no != segments[i].segment_no)
      return mismatch("segment number in the header", segments[i].segment_no, h.segment_no);
    if (expected_sequence && h.first_sequence != *expected_sequence) {
      // The segment before ended early (its tail was lost) or records went missing between them.
      Error e = damage(ErrorKind::Gap, path, 0, "first sequence does not continue the segment before");
      e.expected = *expected_sequence;
      e.found = h.first_sequence;
      return Err{std::move(e)};
    }

    std::uint64_t end = scan.valid_end;
    if (scan.state == SegmentState::Corrupt || (scan.state == SegmentState::TornTail && !last)) {
      Error e = damage(ErrorKind::CorruptRecord, path, scan.damage_offset, scan.damage_what);
      e.partition = scan.damage_partition;
      return Err{std::move(e)};
    }
    if (scan.state == SegmentState::TornTail) {
      Repair repair{Repair::Kind::TornTail, path, scan.damage_offset, bytes->size() - scan.damage_offset, {},
                    scan.damage_what};
      if (options.repair) {
        repair.damaged_copy = path + std::string(kDamagedSuffix);
        if (auto c = write_copy(fs, dir, repair.damaged_copy, *bytes); !c) return Err{std::move(c).error()};
        auto file = fs.open(path, OpenMode::ReadWrite);
        if (!file) return Err{io_error(ErrorKind::IoFailed, IoOp::Open, file.error(), path)};
        if (auto t = (*file)->truncate(scan.damage_offset); !t) {
          return Err{io_error(ErrorKind::IoFailed, IoOp::Truncate, t.error(), path, scan.damage_offset)};
        }
        if (auto s = (*file)->sync(); !s) return Err{io_error(ErrorKind::SyncFailed, IoOp::Sync, s.error(), path)};
      }
      out.log.writable = out.log.writable && options.repair;
      out.repairs.push_back(std::move(repair));
      end = scan.damage_offset;
    }

    SegmentInfo info;
    info.segment_no = h.segment_no;
    info.path = path;
    info.first_sequence = h.first_sequence;
    info.records = scan.records.size();
    info.end_offset = end;
    for (const auto& rec : scan.records) {
      const RecordHeader& rh = rec.header;
      auto [it, fresh] = info.partitions.try_emplace(rh.partition, IndexRange{rh.index, rh.index, 0});
      it->second.first = std::min(it->second.first, rh.index);
      it->second.last = std::max(it->second.last, rh.index);
      ++it->second.records;
      if (rh.type == record_type::kHardState) {
        const auto payload =
            std::span<const std::byte>(*bytes).subspan(rec.offset + kRecordHeaderBytes, rh.payload_len);
        const auto state = decode_hard_state(payload);
        if (!state) {
          Error e = damage(ErrorKind::CorruptRecord, path, rec.offset, "hard-state record shorter than its fields");
          e.partition = rh.partition;
          return Err{std::move(e)};
        }
        out.hard_states[rh.partition] = *state;  // the latest wins
        continue;
      }
      if (rh.type == record_type::kTruncate) {
        if (options.keep_entries) cut_after(out.partitions[rh.partition], rh.index);
        if (!options.keep_entries) cut_index_after(indexes[rh.partition], rh.index);
        continue;
      }
      if (rh.type == record_type::kCheckpoint) {
        auto& checkpoint = out.checkpoints[rh.partition];
        checkpoint = std::max(checkpoint, rh.index);
        if (options.keep_entries) cut_up_to(out.partitions[rh.partition], checkpoint);
        if (!options.keep_entries) cut_index_up_to(indexes[rh.partition], checkpoint);
        continue;
      }
      if (!options.keep_entries) replay_index(indexes[rh.partition], rh.index);
      if (options.keep_entries) {
        const auto payload =
            std::span<const std::byte>(*bytes).subspan(rec.offset + kRecordHeaderBytes, rh.payload_len);
        replay(out.partitions[rh.partition],
               Entry{rh.type, rh.term, rh.index, rh.sequence, std::vector<std::byte>(payload.begin(), payload.end())});
      }
    }
    out.records_read += scan.records.size();
    expected_sequence = h.first_sequence + scan.records.size();
    out.log.next_segment_no = h.segment_no + 1;
    out.log.segments.push_back(std::move(info));
  }
  out.log.next_sequence = expected_sequence.value_or(0);
  for (const auto& [partition, log] : out.partitions) {
    if (!log.empty()) out.ranges[partition] = {log.front().index, log.back().index, log.size()};
  }
  for (const auto& [partition, log] : indexes) {
    if (!log.empty()) out.ranges[partition] = {log.front(), log.back(), log.size()};
  }
  return out;
}

}  // namespace elfin::wal
