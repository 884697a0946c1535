#include <elfin/dumper/dump_sort.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <queue>
#include <system_error>
#include <tuple>

#include <fmt/format.h>

#include "dump_lines.hpp"

namespace elfin::dumper {

namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

constexpr std::size_t kWriteChunk = std::size_t{1} << 20;

DumpReadError temp_error(std::string_view what, const std::string& where) {
  const std::error_code code(errno, std::generic_category());
  return DumpReadError(DumpReadError::TempFile, fmt::format("{}: cannot {}: {}", where, what, code.message()), where,
                       code);
}

std::string temp_dir_of(const SortOptions& options) {
  if (!options.temp_dir.empty()) return options.temp_dir;
  const char* env = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): elfin never sets the environment
  return env != nullptr && *env != '\0' ? std::string{env} : std::string{"/tmp"};
}

// An anonymous file in `dir`: O_TMPFILE where the file system has it, else a unique name unlinked
// at once. Either way it disappears when closed or when the process dies.
Result<FilePtr, DumpReadError> open_temp_file(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno != ENOENT && errno != EACCES) {
    std::string name = dir + "/elfin-dump-sort-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) return Err{temp_error("create a temporary file", dir)};
  std::FILE* file = ::fdopen(fd, "w+");
  if (file == nullptr) {
    ::close(fd);
    return Err{temp_error("open a temporary file", dir)};
  }
  return FilePtr{file};
}

bool key_less(const DumpRecord& a, const DumpRecord& b) {
  return std::tie(a.ts, a.group, a.sequence_no) < std::tie(b.ts, b.group, b.sequence_no);
}

// Heap bytes a record's strings hold, with malloc's per-block overhead: the record itself is
// counted as a slot of the vector holding it.
std::uint64_t heap_bytes(const DumpRecord& r) {
  constexpr std::size_t kBlockOverhead = 16;
  auto of = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 + kBlockOverhead : 0; };
  return of(r.group) + of(r.message_name) + of(r.protocol) + of(r.body_json) + (r.key ? of(*r.key) : 0) +
         (r.class_name ? of(*r.class_name) : 0);
}

// One sorted source being merged: a run read back from its file, or the records still in memory.
class Cursor {
 public:
  explicit Cursor(std::FILE* run, std::string dir) : run_(run), dir_(std::move(dir)) {}
  explicit Cursor(std::vector<DumpRecord>& memory) : memory_(&memory) {}
  Cursor(Cursor&& other) noexcept
      : run_(other.run_),
        dir_(std::move(other.dir_)),
        line_(std::exchange(other.line_, nullptr)),
        capacity_(other.capacity_),
        memory_(other.memory_),
        next_(other.next_),
        current_(std::move(other.current_)) {}
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  Cursor& operator=(Cursor&&) = delete;
  ~Cursor() { std::free(line_); }  // NOLINT(cppcoreguidelines-no-malloc): getline's buffer

  /// Moves to the next record; false at the end.
  [[nodiscard]] Result<bool, DumpReadError> advance() {
    if (memory_ != nullptr) {
      if (next_ == memory_->size()) return false;
      current_ = std::move((*memory_)[next_++]);
      return true;
    }
    ssize_t n = ::getline(&line_, &capacity_, run_);
    if (n < 0) {
      if (std::ferror(run_) != 0) return Err{temp_error("read back a sorted run", dir_)};
      return false;
    }
    auto record = parse_dump_line(std::string_view{line_, static_cast<std::size_t>(n)});
    if (!record) {
      return Err{DumpReadError(DumpReadError::TempFile,
                               fmt::format("{}: a sorted run read back wrong: {}", dir_, record.error().message()),
                               dir_)};
    }
    current_ = std::move(*record);
    return true;
  }
  [[nodiscard]] DumpRecord& current() { return current_; }

 private:
  std::FILE* run_ = nullptr;
  std::string dir_;
  char* line_ = nullptr;
  std::size_t capacity_ = 0;
  std::vector<DumpRecord>* memory_ = nullptr;
  std::size_t next_ = 0;
  DumpRecord current_;
};

// Merges sorted sources; on equal keys the source given first wins, so sources given in reading
// order keep a stable order.
Result<void, DumpReadError> merge(std::vector<Cursor>& cursors, const std::function<void(DumpRecord&)>& on_record) {
  auto after = [&](std::size_t a, std::size_t b) {
    const auto& ra = cursors[a].current();
    const auto& rb = cursors[b].current();
    if (key_less(rb, ra)) return true;
    return !key_less(ra, rb) && a > b;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(after)> heap(after);
  for (std::size_t i = 0; i < cursors.size(); ++i) {
    auto more = cursors[i].advance();
    if (!more) return Err{more.error()};
    if (*more) heap.push(i);
  }
  while (!heap.empty()) {
    std::size_t i = heap.top();
    heap.pop();
    on_record(cursors[i].current());
    auto more = cursors[i].advance();
    if (!more) return Err{more.error()};
    if (*more) heap.push(i);
  }
  return {};
}

// Writes records as dump lines into a new run, left positioned at its start.
class RunWriter {
 public:
  static Result<RunWriter, DumpReadError> open(const std::string& dir) {
    auto file = open_temp_file(dir);
    if (!file) return Err{file.error()};
    return RunWriter(std::move(*file), dir);
  }
  void add(const DumpRecord& record) {
    if (!ok_) return;
    append_json_line(record, buffer_);
    if (buffer_.size() >= kWriteChunk) flush();
  }
  Result<FilePtr, DumpReadError> finish() {
    flush();
    if (!ok_ || std::fflush(file_.get()) != 0 || std::fseek(file_.get(), 0, SEEK_SET) != 0) {
      return Err{temp_error("write a sorted run", dir_)};
    }
    return std::move(file_);
  }

 private:
  RunWriter(FilePtr file, std::string dir) : file_(std::move(file)), dir_(std::move(dir)) {}
  void flush() {
    if (ok_ && !buffer_.empty()) ok_ = std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) == buffer_.size();
    buffer_.clear();
  }
  FilePtr file_;
  std::string dir_;
  std::string buffer_;
  bool ok_ = true;
};

}  // namespace

struct SortedDumps::State {
  std::string temp_dir;
  std::size_t max_open_runs = 64;
  std::vector<FilePtr> runs;       // sorted, in reading order
  std::vector<DumpRecord> memory;  // sorted, read after every run
  std::uint64_t heap_bytes = 0;    // of the records in `memory`, beyond the vector's own slots

  [[nodiscard]] std::uint64_t memory_bytes() const { return heap_bytes + memory.capacity() * sizeof(DumpRecord); }
  std::size_t spilled = 0;
  bool consumed = false;

  void sort_memory() { std::stable_sort(memory.begin(), memory.end(), key_less); }

  Result<void, DumpReadError> spill() {
    sort_memory();
    auto writer = RunWriter::open(temp_dir);
    if (!writer) return Err{writer.error()};
    for (const auto& record : memory) writer->add(record);
    auto run = writer->finish();
    if (!run) return Err{run.error()};
    runs.push_back(std::move(*run));
    memory.clear();
    heap_bytes = 0;
    ++spilled;
    return {};
  }

  // Merges consecutive groups of runs into longer runs until at most `max_open_runs` remain, so
  // the final merge never holds more files than that open. Consecutive groups keep reading order.
  Result<void, DumpReadError> reduce_runs() {
    std::size_t fan_in = std::max<std::size_t>(max_open_runs, 2);
    while (runs.size() > fan_in) {
      std::vector<FilePtr> longer;
      for (std::size_t first = 0; first < runs.size(); first += fan_in) {
        std::size_t last = std::min(first + fan_in, runs.size());
        std::vector<Cursor> cursors;
        for (std::size_t i = first; i < last; ++i) cursors.emplace_back(runs[i].get(), temp_dir);
        auto writer = RunWriter::open(temp_dir);
        if (!writer) return Err{writer.error()};
        auto merged = merge(cursors, [&](DumpRecord& record) { writer->add(record); });
        if (!merged) return Err{merged.error()};
        auto run = writer->finish();
        if (!run) return Err{run.error()};
        cursors.clear();
        for (std::size_t i = first; i < last; ++i) runs[i].reset();
        longer.push_back(std::move(*run));
      }
      runs = std::move(longer);
    }
    return {};
  }
};

SortedDumps::SortedDumps(std::unique_ptr<State> state) : state_(std::move(state)) {}
SortedDumps::SortedDumps(SortedDumps&&) noexcept = default;
SortedDumps& SortedDumps::operator=(SortedDumps&&) noexcept = default;
SortedDumps::~SortedDumps() = default;

std::size_t SortedDumps::spilled_runs() const { return state_->spilled; }

Result<void, DumpReadError> SortedDumps::for_each(const std::function<void(const DumpRecord&)>& on_record) {
  State& s = *state_;
  if (s.consumed) return {};
  s.consumed = true;
  if (s.runs.empty()) {
    for (const auto& record : s.memory) on_record(record);
    s.memory.clear();
    return {};
  }
  // The records in memory count as one more run: reduce to leave room for them.
  if (s.max_open_runs > 2) --s.max_open_runs;
  auto reduced = s.reduce_runs();
  if (!reduced) return reduced;
  std::vector<Cursor> cursors;
  cursors.reserve(s.runs.size() + 1);
  for (auto& run : s.runs) cursors.emplace_back(run.get(), s.temp_dir);
  cursors.emplace_back(s.memory);
  auto merged = merge(cursors, [&](DumpRecord& record) { on_record(record); });
  cursors.clear();
  s.runs.clear();
  s.memory.clear();
  return merged;
}

Result<SortedDumps, DumpReadError> sort_dumps(const std::vector<std::string>& files, const DumpFilter& filter,
                                              ReadStats& stats, const OnMalformed& on_malformed, SortOptions options) {
  auto state = std::make_unique<SortedDumps::State>();
  state->temp_dir = temp_dir_of(options);
  state->max_open_runs = options.max_open_runs;
  std::optional<DumpReadError> failed;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Err{detail::os_error(DumpReadError::Open, file)};
    std::string line;
    std::uint64_t line_no = 0;
    while (!failed && std::getline(in, line)) {
      detail::take_line(line, file, ++line_no, filter, stats, on_malformed, [&](DumpRecord&& record) {
        if (options.on_match) options.on_match(record);
        auto& memory = state->memory;
        // A full vector would double its slots: spill first if that would pass the budget (the
        // slots are kept for the next run).
        bool would_grow_past = memory.size() == memory.capacity() && !memory.empty() &&
                               state->heap_bytes + 2 * memory.capacity() * sizeof(DumpRecord) > options.memory_budget;
        if (would_grow_past) {
          if (auto spilled = state->spill(); !spilled) failed = spilled.error();
        }
        state->heap_bytes += heap_bytes(record);
        memory.push_back(std::move(record));
        if (!failed && state->memory_bytes() >= options.memory_budget) {
          if (auto spilled = state->spill(); !spilled) failed = spilled.error();
        }
      });
    }
    if (failed) return Err{std::move(*failed)};
    if (in.bad()) return Err{detail::os_error(DumpReadError::Read, file)};
  }
  state->sort_memory();
  return SortedDumps(std::move(state));
}

}  // namespace elfin::dumper
