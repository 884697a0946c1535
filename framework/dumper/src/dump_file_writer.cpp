#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/internal/thread_name.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include <elfin/dumper/dump_format.hpp>

namespace elfin::dumper {

namespace {
std::size_t count_dumps(const std::vector<dumping::DumpChunk>& batch) {
  std::size_t n = 0;
  for (const auto& chunk : batch) n += chunk.size();
  return n;
}
}  // namespace

void order_by_time(std::vector<const dumping::Dump*>& dumps, std::vector<const dumping::Dump*>& scratch) {
  const auto earlier = [](const dumping::Dump* a, const dumping::Dump* b) { return a->timestamp_ns < b->timestamp_ns; };
  const std::size_t n = dumps.size();
  // The runs: where each begins, then n. A run ends only where time goes backwards, so equal
  // timestamps stay in one run, in batch order.
  std::vector<std::size_t> bounds{0};
  for (std::size_t i = 1; i < n; ++i) {
    if (earlier(dumps[i], dumps[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  if (bounds.size() <= 2) return;  // one run: in order already

  // Bottom-up: merge runs 0+1, 2+3, ... into the other buffer until one run is left. std::merge
  // takes the left run's element first on a tie, and the left run holds the earlier dumps of the
  // batch: the order is std::stable_sort's.
  scratch.resize(n);
  const dumping::Dump** from = dumps.data();
  const dumping::Dump** to = scratch.data();
  while (bounds.size() > 2) {
    const std::size_t runs = bounds.size() - 1;
    std::size_t kept = 0;
    for (std::size_t r = 0; r < runs; r += 2) {
      const std::size_t lo = bounds[r];
      const std::size_t mid = bounds[r + 1];
      const std::size_t hi = r + 1 < runs ? bounds[r + 2] : mid;  // a last run without a pair is copied
      std::merge(from + lo, from + mid, from + mid, from + hi, to + lo, earlier);
      bounds[kept++] = lo;  // behind r: not read again in this pass
    }
    bounds[kept++] = n;
    bounds.resize(kept);
    std::swap(from, to);
  }
  if (from != dumps.data()) dumps.swap(scratch);
}

DumpFileWriter::DumpFileWriter(std::string path, std::uint16_t node_no, std::size_t max_body_size,
                               dumping::DumpStorage* storage)
    : path_(std::move(path)), node_no_(node_no), storage_(storage), max_body_size_(max_body_size), thread_([this] {
        elfin::detail::name_this_thread("elfin-dump-write");
        run();
      }) {
  if (storage_ != nullptr) {
    storage_->set_backlog_alarm(kBacklogChunks, [this] {
      {
        std::lock_guard lock(mu_);
        backlog_ = true;
      }
      cv_.notify_all();
    });
  }
}

DumpFileWriter::~DumpFileWriter() {
  if (storage_ != nullptr) storage_->set_backlog_alarm(0, {});  // no ring reaches this writer after it
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void DumpFileWriter::push_step(Step step) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(step));
    ++submitted_;  // every step counts, so flush() also waits for drains and reopens
  }
  cv_.notify_all();
}

void DumpFileWriter::drain() {
  if (storage_ != nullptr) push_step(Step{{}, StepKind::Drain});
}

void DumpFileWriter::submit(std::vector<dumping::DumpChunk> batch) {
  if (!batch.empty()) push_step(Step{std::move(batch), StepKind::Batch});
}

void DumpFileWriter::reopen() { push_step(Step{{}, StepKind::Reopen}); }

void DumpFileWriter::set_max_body_size(std::size_t max_body_size) {
  std::lock_guard lock(mu_);
  max_body_size_ = max_body_size;
}

void DumpFileWriter::flush() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = submitted_;
  cv_.wait(lock, [&] { return completed_ >= target; });
}

DumpFileWriter::Stats DumpFileWriter::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool DumpFileWriter::ensure_open() {
  if (fd_ >= 0) return true;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ >= 0) return true;
  std::lock_guard lock(mu_);
  stats_.last_error = fmt::format("{}: cannot open the dump file: {}", path_, std::generic_category().message(errno));
  return false;
}

void DumpFileWriter::write_batch(const std::vector<dumping::DumpChunk>& batch, std::size_t max_body_size) {
  // Threads record into separate shards, so a batch is ordered by time here, where it is cheap
  // (stably: one thread's dumps of the same nanosecond stay in recording order).
  order_.clear();
  order_.reserve(count_dumps(batch));
  for (const auto& chunk : batch) {
    for (const auto& dump : chunk.dumps) order_.push_back(&dump);
  }
  order_by_time(order_, merged_);
  std::size_t lines = 0;
  std::string error;
  auto write_out = [&] {
    std::string_view left = text_;
    while (!left.empty() && error.empty()) {
      ssize_t n = ::write(fd_, left.data(), left.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = fmt::format("{}: cannot write the dump file: {}", path_, std::generic_category().message(errno));
        break;
      }
      left.remove_prefix(static_cast<std::size_t>(n));
    }
    text_.clear();
  };
  std::uint64_t written = 0;
  text_.clear();
  for (const dumping::Dump* dump : order_) {
    append_dump_line(*dump, node_no_, max_body_size, line_scratch_, text_);
    ++lines;
    if (text_.size() >= std::size_t{128} * 1024) {
      write_out();
      if (error.empty()) written = lines;
    }
  }
  if (!text_.empty()) write_out();
  if (error.empty()) written = lines;
  const std::size_t total = order_.size();
  order_.clear();  // the pointers die with the batch
  std::lock_guard lock(mu_);
  stats_.written += written;
  stats_.lost += total - written;
  stats_.last_error = std::move(error);
}

void DumpFileWriter::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || backlog_; });
    Step step;
    bool counted = false;  // a step of the queue (flush waits for it), not the alarm's drain
    if (!queue_.empty()) {
      step = std::move(queue_.front());
      queue_.pop_front();
      counted = true;
    } else if (backlog_) {
      step.kind = StepKind::Drain;
    } else {
      return;  // stopping, and everything is written
    }
    if (step.kind == StepKind::Drain) backlog_ = false;  // this drain takes what rang the alarm
    const std::size_t max_body_size = max_body_size_;
    lock.unlock();

    auto& batch = step.batch;
    const bool reopen = step.kind == StepKind::Reopen;
    if (step.kind == StepKind::Drain) batch = storage_->drain_chunks();
    if (reopen && fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    bool opened = ensure_open();
    if (reopen && opened) {
      std::lock_guard count(mu_);
      ++stats_.reopened;
    }
    if (!batch.empty()) {
      if (opened) {
        write_batch(batch, max_body_size);
      } else {
        std::lock_guard count(mu_);
        stats_.lost += count_dumps(batch);
      }
    }
    // Releases the messages on this thread, not under the lock.
    if (storage_ != nullptr) {
      storage_->recycle(std::move(batch));
    } else {
      batch.clear();
    }

    lock.lock();
    if (counted) {
      ++completed_;
      cv_.notify_all();
    }
  }
}

}  // namespace elfin::dumper
