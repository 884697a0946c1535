// DumpFileWriter: the dump file, serialized and written by a thread of its own, so that actor
// threads never wait for the disk or spend time formatting JSON.
//
// The writer drains the storage itself: when the dumper actor asks (`drain`, every write interval,
// before a reopen, on FlushDumps) and when the storage's backlog alarm says chunks pile up faster
// than the interval takes them. Only this thread drains, so one thread's dumps reach the file in
// the order it recorded them. Draining on the alarm keeps the dumps waiting few enough to stay in
// the caches (the memory of written chunks goes back to the recorders warm), where an interval
// alone lets a fast stream fill the storage with cold memory, or lose dumps.
//
// The writer turns a batch into lines, appends them to the file (O_APPEND, so logrotate's
// copytruncate is safe) and counts what it wrote. `reopen` (SIGHUP, ReopenDumpFile) takes its turn
// in the queue: what was drained before it goes to the old file, the rest to the new one. A failed
// open or write is kept as `last_error`, the batch is counted lost, and the next batch tries again.
// `submit` hands over a batch drained elsewhere (tests, tools).
//
// A batch is the chunks of one drain. Its dumps keep their slots in the DumpStorage until the
// writer is done with them and recycles the chunks: the storage's capacity bounds what waits for
// the disk, here included, so a writer that falls behind makes new dumps count as lost instead
// of memory grow.
//
// Each batch is written in timestamp order. Every chunk is already in order (one thread recorded
// it), and so, nearly always, are one thread's consecutive chunks: the writer merges those runs
// instead of sorting, and formats each dump straight into its output buffer (append_dump_line),
// reusing its memory from batch to batch.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <elfin/dumper/dump_format.hpp>
#include <elfin/dumping.hpp>
#include <elfin/internal/dump_storage.hpp>

namespace elfin::dumper {

/// Orders `dumps` by timestamp_ns exactly as std::stable_sort would (equal timestamps keep their
/// order) by merging the runs already in order, pairwise: linear for one run, n·log2(runs) in
/// general. `scratch` is memory it may use (and keeps for the next call).
void order_by_time(std::vector<const dumping::Dump*>& dumps, std::vector<const dumping::Dump*>& scratch);

class DumpFileWriter {
 public:
  struct Stats {
    std::uint64_t written = 0;  ///< dumps written to the file
    std::uint64_t lost = 0;     ///< dumps of batches that could not be written
    std::uint64_t reopened = 0;
    std::string last_error;  ///< empty once a write succeeds again
  };

  /// Full chunks waiting in the storage that make the writer drain before the next `drain`.
  static constexpr std::size_t kBacklogChunks = 16;

  /// `storage` (may be null: then only `submit` gives work) is drained by this writer and gets the
  /// chunks of every written or lost batch back.
  DumpFileWriter(std::string path, std::uint16_t node_no, std::size_t max_body_size,
                 dumping::DumpStorage* storage = nullptr);
  DumpFileWriter(const DumpFileWriter&) = delete;
  DumpFileWriter& operator=(const DumpFileWriter&) = delete;
  /// Writes everything handed over, then stops.
  ~DumpFileWriter();

  /// Drains the storage and writes what it held (in its turn after the steps before).
  void drain();
  void submit(std::vector<dumping::DumpChunk> batch);
  void reopen();
  void set_max_body_size(std::size_t max_body_size);
  /// Blocks until everything submitted before the call is written.
  void flush();
  [[nodiscard]] Stats stats() const;

 private:
  void run();
  void write_batch(const std::vector<dumping::DumpChunk>& batch, std::size_t max_body_size);
  bool ensure_open();

  const std::string path_;
  const std::uint16_t node_no_;
  dumping::DumpStorage* const storage_;
  int fd_ = -1;  // only the writer thread touches it
  // The writer thread's reused memory: a batch's dumps in time order, the merge's second buffer,
  // the formatter's scratch and the text waiting for write(2). Kept at the largest batch's size.
  std::vector<const dumping::Dump*> order_;
  std::vector<const dumping::Dump*> merged_;
  DumpLineScratch line_scratch_;
  std::string text_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // One step of the writer, in submission order: a batch to write, a drain, or a reopen.
  enum class StepKind : std::uint8_t { Batch, Drain, Reopen };
  struct Step {
    std::vector<dumping::DumpChunk> batch;
    StepKind kind = StepKind::Batch;
  };
  void push_step(Step step);
  std::deque<Step> queue_;       // guarded by mu_
  std::size_t max_body_size_;    // guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  bool backlog_ = false;         // guarded by mu_: the storage's alarm rang
  std::uint64_t submitted_ = 0;  // batches; guarded by mu_
  std::uint64_t completed_ = 0;  // batches; guarded by mu_
  Stats stats_;                  // guarded by mu_
  std::thread thread_;
};

}  // namespace elfin::dumper
