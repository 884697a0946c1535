#include <elfin/dumper/dump_reader.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <thread>
#include <tuple>

#include <elfin/dumper/dump_sort.hpp>

#include "dump_lines.hpp"

namespace elfin::dumper {

using detail::os_error;
using detail::take_line;

void sort_by_time(std::vector<DumpRecord>& records) {
  std::stable_sort(records.begin(), records.end(), [](const DumpRecord& a, const DumpRecord& b) {
    return std::tie(a.ts, a.group, a.sequence_no) < std::tie(b.ts, b.group, b.sequence_no);
  });
}

Result<std::vector<DumpRecord>, DumpReadError> read_dumps(const std::vector<std::string>& files,
                                                          const DumpFilter& filter, ReadStats& stats,
                                                          const OnMalformed& on_malformed) {
  SortOptions everything_in_memory;
  everything_in_memory.memory_budget = std::numeric_limits<std::uint64_t>::max();
  auto sorted = sort_dumps(files, filter, stats, on_malformed, std::move(everything_in_memory));
  if (!sorted) return Err{sorted.error()};
  std::vector<DumpRecord> records;
  auto all = sorted->for_each([&](const DumpRecord& record) { records.push_back(record); });
  if (!all) return Err{all.error()};
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
