#include <elfin/dumper/dump_reader.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>
#include <tuple>

#include <fmt/format.h>

namespace elfin::dumper {

namespace {

// Parses one line and applies the filter, keeping the counts.
template <class OnRecord>
void take_line(std::string_view line, const std::string& file, std::uint64_t line_no, const DumpFilter& filter,
               ReadStats& stats, const OnMalformed& on_malformed, OnRecord&& on_record) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank lines are not records
  ++stats.lines_read;
  auto record = parse_dump_line(line);
  if (!record) {
    ++stats.malformed;
    if (on_malformed) on_malformed(MalformedLine{file, line_no, record.error().message()});
    return;
  }
  if (!filter.matches(*record)) return;
  ++stats.matched;
  on_record(std::move(*record));
}

DumpReadError os_error(DumpReadError::Kind kind, const std::string& file) {
  const std::error_code code(errno, std::generic_category());
  return DumpReadError(
      kind, fmt::format("{}: cannot {}: {}", file, kind == DumpReadError::Open ? "open" : "read", code.message()), file,
      code);
}

}  // namespace

void sort_by_time(std::vector<DumpRecord>& records) {
  std::stable_sort(records.begin(), records.end(), [](const DumpRecord& a, const DumpRecord& b) {
    return std::tie(a.ts, a.group, a.sequence_no) < std::tie(b.ts, b.group, b.sequence_no);
  });
}

Result<std::vector<DumpRecord>, DumpReadError> read_dumps(const std::vector<std::string>& files,
                                                          const DumpFilter& filter, ReadStats& stats,
                                                          const OnMalformed& on_malformed) {
  std::vector<DumpRecord> records;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Err{os_error(DumpReadError::Open, file)};
    std::string line;
    std::uint64_t line_no = 0;
    while (std::getline(in, line)) {
      take_line(line, file, ++line_no, filter, stats, on_malformed,
                [&](DumpRecord&& record) { records.push_back(std::move(record)); });
    }
    if (in.bad()) return Err{os_error(DumpReadError::Read, file)};
  }
  sort_by_time(records);
  return records;
}

Result<void, DumpReadError> follow_dump(const std::string& file, const DumpFilter& filter, ReadStats& stats,
                                        const OnMalformed& on_malformed,
                                        const std::function<void(const DumpRecord&)>& on_record,
                                        const std::atomic<bool>& stop, FollowOptions options) {
  int fd = -1;
  struct stat opened{};
  std::string pending;  // the tail of the file after its last newline: a line still being written
  std::uint64_t line_no = 0;
  std::uint64_t offset = 0;

  auto close_file = [&] {
    if (fd >= 0) ::close(fd);
    fd = -1;
  };
  auto open_file = [&](bool from_start) -> bool {
    fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::fstat(fd, &opened);
    offset = from_start ? 0 : static_cast<std::uint64_t>(opened.st_size);
    ::lseek(fd, static_cast<off_t>(offset), SEEK_SET);
    pending.clear();
    line_no = 0;
    return true;
  };
  auto flush_lines = [&] {
    std::size_t start = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      take_line(std::string_view{pending}.substr(start, nl - start), file, ++line_no, filter, stats, on_malformed,
                [&](DumpRecord&& record) { on_record(record); });
      start = nl + 1;
    }
    pending.erase(0, start);
  };

  if (!open_file(options.from_start) && errno != ENOENT) return Err{os_error(DumpReadError::Open, file)};
  char buffer[64 * 1024];
  while (!stop.load(std::memory_order_relaxed)) {
    if (fd >= 0) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno != EINTR) return close_file(), Err{os_error(DumpReadError::Read, file)};
      if (n > 0) {
        pending.append(buffer, static_cast<std::size_t>(n));
        offset += static_cast<std::uint64_t>(n);
        flush_lines();
        continue;
      }
    }
    // At the end: has the file been replaced (rotation) or truncated? Then start over on the new one.
    struct stat now{};
    bool exists = ::stat(file.c_str(), &now) == 0;
    bool replaced = fd >= 0 && exists && (now.st_ino != opened.st_ino || now.st_dev != opened.st_dev);
    bool truncated = fd >= 0 && exists && !replaced && static_cast<std::uint64_t>(now.st_size) < offset;
    if (fd < 0 ? exists : (replaced || truncated)) {
      if (!pending.empty()) {
        pending += '\n';  // the old file ended mid-line; report that line rather than lose it silently
        flush_lines();
      }
      close_file();
      open_file(true);
      if (options.on_reopen) options.on_reopen(replaced ? "replaced" : truncated ? "truncated" : "created");
      continue;
    }
    std::this_thread::sleep_for(options.poll_interval);  // polling, like tail -F
  }
  close_file();
  return {};
}

}  // namespace elfin::dumper
