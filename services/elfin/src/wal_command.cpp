#include "wal_command.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include <elfin/wal/format.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/segment_scan.hpp>

namespace elfin::cli {

namespace {

constexpr const char* kWalUsage = R"(usage: elfin wal <inspect|verify> DIR

  inspect DIR   list the segments of every WAL in DIR, each partition's index range, and any
                damage (file, byte offset, partition, failed check)
  verify DIR    check every WAL in DIR; exit code 1 if anything is damaged or unreadable
Neither command changes a file.
)";

// Recovery as `elfin` reads it: nothing repaired, no payload kept, generous record limit.
wal::RecoveryOptions read_only(const std::string& dir, std::uint32_t wal_id, std::uint32_t wal_count) {
  wal::RecoveryOptions options;
  options.dir = dir;
  options.wal_id = wal_id;
  options.wal_count = wal_count;
  options.repair = false;
  options.keep_entries = false;
  options.max_payload_bytes = std::uint64_t{1} << 31;
  return options;
}

struct WalFiles {
  std::vector<std::string> segments;  // sorted by name = by number
  std::optional<std::uint32_t> wal_count;
};

// The segment files in `dir`, by WAL id; other files (copies, temporaries) in `others`.
wal::IoResult<std::map<std::uint32_t, WalFiles>> find_wals(wal::FileSystem& fs, const std::string& dir,
                                                           std::vector<std::string>& others) {
  auto names = fs.list(dir);
  if (!names) return Err{names.error()};
  std::map<std::uint32_t, WalFiles> wals;
  for (const auto& name : *names) {
    if (auto parsed = wal::parse_segment_file_name(name)) {
      wals[parsed->wal_id].segments.push_back(name);
    } else {
      others.push_back(name);
    }
  }
  return wals;
}

// The wal_count the WAL's segments claim, 1 if none says.
std::uint32_t wal_count_of(wal::FileSystem& fs, const std::string& dir, std::uint32_t wal_id) {
  return wal::stored_wal_count(fs, dir, wal_id).value_or(1);
}

std::string range_text(const wal::IndexRange& r) {
  return fmt::format("index {}..{} ({} record{})", r.first, r.last, r.records, r.records == 1 ? "" : "s");
}

// One WAL's verdict: the recovery error or the torn tails it would cut; "" when clean.
std::vector<std::string> problems_of(const wal::WalResult<wal::Recovery>& recovered) {
  std::vector<std::string> problems;
  if (!recovered) {
    problems.push_back(wal::to_string(recovered.error()));
    return problems;
  }
  for (const auto& repair : recovered->repairs) {
    problems.push_back(fmt::format("{} in {} at byte {} ({}; {} bytes would be cut by recovery)",
                                   repair.kind == wal::Repair::Kind::TornTail ? "torn tail" : "torn segment header",
                                   repair.path, repair.offset, repair.what, repair.bytes_cut));
  }
  return problems;
}

/// find_wals, saying on `err` why the directory cannot be listed (then nullopt).
std::optional<std::map<std::uint32_t, WalFiles>> listed_wals(wal::FileSystem& fs, const std::string& dir,
                                                             std::vector<std::string>& others, std::FILE* err) {
  auto wals = find_wals(fs, dir, others);
  if (wals) return std::move(*wals);
  fmt::print(err, "elfin wal: {}\n",
             wal::to_string(wal::io_error(wal::ErrorKind::ReadFailed, wal::IoOp::List, wals.error(), dir)));
  return std::nullopt;
}

int inspect(const std::string& dir, std::FILE* out, std::FILE* err) {
  wal::PosixFileSystem fs;
  std::vector<std::string> others;
  auto wals = listed_wals(fs, dir, others, err);
  if (!wals) return 1;
  if (wals->empty()) fmt::print(out, "{}: no WAL segments\n", dir);
  bool damaged = false;
  for (const auto& [wal_id, files] : *wals) {
    const std::uint32_t wal_count = wal_count_of(fs, dir, wal_id);
    fmt::print(out, "wal {} (wal_count {}): {} segment{}\n", wal_id, wal_count, files.segments.size(),
               files.segments.size() == 1 ? "" : "s");
    for (const auto& name : files.segments) {
      const auto path = wal::join_path(dir, name);
      auto bytes = wal::read_whole_file(fs, path);
      if (!bytes) {
        fmt::print(out, "  {}  unreadable: {}\n", name, wal::to_string(bytes.error()));
        continue;
      }
      const auto scan = wal::scan_segment(*bytes, std::uint64_t{1} << 31);
      if (scan.state == wal::SegmentState::ShortHeader || scan.state == wal::SegmentState::BadHeader) {
        fmt::print(out, "  {}  {} bytes  DAMAGED: {}\n", name, scan.file_bytes, wal::to_string(scan.state));
        continue;
      }
      const bool ok = scan.state == wal::SegmentState::Clean;
      const std::uint64_t first = scan.header.first_sequence;
      const std::string sequences = scan.records.empty()
                                        ? fmt::format("sequence {} (no records)", first)
                                        : fmt::format("sequence {}..{}", first, first + scan.records.size() - 1);
      fmt::print(out, "  {}  segment {}  {}  {} record{}  {} of {} bytes used  checksums {}\n", name,
                 scan.header.segment_no, sequences, scan.records.size(), scan.records.size() == 1 ? "" : "s",
                 scan.valid_end, scan.file_bytes, ok ? "OK" : "DAMAGED");
      std::map<std::uint64_t, wal::IndexRange> ranges;
      for (const auto& rec : scan.records) {
        auto [it, fresh] =
            ranges.try_emplace(rec.header.partition, wal::IndexRange{rec.header.index, rec.header.index, 0});
        it->second.first = std::min(it->second.first, rec.header.index);
        it->second.last = std::max(it->second.last, rec.header.index);
        ++it->second.records;
      }
      for (const auto& [partition, range] : ranges)
        fmt::print(out, "    partition {}: {}\n", partition, range_text(range));
      if (!ok) {
        fmt::print(out, "    damage at byte {}: {} ({}){}\n", scan.damage_offset, scan.damage_what,
                   wal::to_string(scan.state),
                   scan.damage_partition ? fmt::format(", partition {} as its header reads", *scan.damage_partition)
                                         : std::string());
      }
    }
    auto recovered = wal::recover(fs, read_only(dir, wal_id, wal_count));
    if (recovered) {
      fmt::print(out, "  after replay ({} records read):\n", recovered->records_read);
      for (const auto& [partition, range] : recovered->ranges) {
        const auto checkpoint = recovered->checkpoints.find(partition);
        fmt::print(out, "    partition {}: {}{}\n", partition, range_text(range),
                   checkpoint == recovered->checkpoints.end() ? std::string()
                                                              : fmt::format(", checkpoint {}", checkpoint->second));
      }
    }
    const auto problems = problems_of(recovered);
    for (const auto& p : problems) fmt::print(out, "  DAMAGED: {}\n", p);
    damaged = damaged || !problems.empty();
  }
  for (const auto& name : others) {
    if (name.ends_with(wal::kDamagedSuffix))
      fmt::print(out, "note: {}: a copy recovery kept of a damaged segment\n", name);
    if (name.ends_with(wal::kTempSuffix))
      fmt::print(out, "note: {}: an unfinished rotation (recovery deletes it)\n", name);
  }
  fmt::print(out, "{}\n", damaged ? "verdict: DAMAGED" : "verdict: ok");
  return damaged ? 1 : 0;
}

int verify(const std::string& dir, std::FILE* out, std::FILE* err) {
  wal::PosixFileSystem fs;
  std::vector<std::string> others;
  auto wals = listed_wals(fs, dir, others, err);
  if (!wals) return 1;
  bool damaged = false;
  for (const auto& [wal_id, files] : *wals) {
    auto recovered = wal::recover(fs, read_only(dir, wal_id, wal_count_of(fs, dir, wal_id)));
    const auto problems = problems_of(recovered);
    if (problems.empty()) {
      fmt::print(out, "wal {}: ok: {} segments, {} records, {} partitions\n", wal_id, recovered->log.segments.size(),
                 recovered->records_read, recovered->ranges.size());
    }
    for (const auto& p : problems) fmt::print(out, "wal {}: DAMAGED: {}\n", wal_id, p);
    damaged = damaged || !problems.empty();
  }
  if (wals->empty()) fmt::print(out, "{}: no WAL segments\n", dir);
  return damaged ? 1 : 0;
}

}  // namespace

int run_wal_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    fmt::print(out, "{}", kWalUsage);
    return 0;
  }
  if (args.size() != 2 || (args[0] != "inspect" && args[0] != "verify")) {
    fmt::print(err, "elfin wal: expected `inspect DIR` or `verify DIR`\n\n{}", kWalUsage);
    return 2;
  }
  const std::string dir(args[1]);
  return args[0] == "inspect" ? inspect(dir, out, err) : verify(dir, out, err);
}

}  // namespace elfin::cli
