// The workers, the schedule and the collection of figures (see elfin/loadgen/runner.hpp).
//
// Each worker records into its own per-kind summaries under its own mutex (taken by nobody else
// except the collector, once per interval), so recording never contends between workers. The
// collector swaps a worker's summaries with empty ones and merges them outside the lock.
#include <elfin/loadgen/runner.hpp>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <elfin/loadgen/pacer.hpp>

namespace elfin::loadgen {

namespace {

using Clock = std::chrono::steady_clock;

void merge_into(RunSummary& into, const RunSummary& from) {
  into.ops += from.ops;
  into.latency.merge(from.latency);
  for (const auto& [kind, n] : from.errors) into.errors[kind] += n;
}

void clear(RunSummary& summary) {
  summary.ops = 0;
  summary.latency.clear();
  summary.errors.clear();
}

struct WorkerSlot {
  std::mutex mutex;
  std::vector<RunSummary> current;  // per kind, since the collector last took them
  std::vector<RunSummary> spare;    // the collector's side of the swap
};

class Collector {
 public:
  explicit Collector(std::size_t kinds, unsigned workers) : kinds_(kinds), total_(kinds) {
    slots_.reserve(workers);
    for (unsigned w = 0; w < workers; ++w) {
      auto slot = std::make_unique<WorkerSlot>();
      slot->current.resize(kinds);
      slot->spare.resize(kinds);
      slots_.push_back(std::move(slot));
    }
  }

  void record(unsigned worker, const Outcome& outcome, std::uint64_t ns) {
    WorkerSlot& slot = *slots_[worker];
    std::lock_guard lock(slot.mutex);
    RunSummary& summary = slot.current[outcome.kind < kinds_ ? outcome.kind : 0];
    if (outcome.error.empty()) {
      ++summary.ops;
      summary.latency.record(ns);
    } else {
      ++summary.errors[outcome.error];
    }
  }

  /// Takes every worker's figures since the last call: adds them to the totals and returns them
  /// summed over the kinds.
  RunSummary collect() {
    RunSummary interval;
    for (auto& slot : slots_) {
      {
        std::lock_guard lock(slot->mutex);
        std::swap(slot->current, slot->spare);
      }
      for (std::size_t k = 0; k < kinds_; ++k) {
        merge_into(total_[k], slot->spare[k]);
        merge_into(interval, slot->spare[k]);
        clear(slot->spare[k]);
      }
    }
    return interval;
  }

  [[nodiscard]] std::vector<RunSummary>& totals() { return total_; }

 private:
  std::size_t kinds_;
  std::vector<std::unique_ptr<WorkerSlot>> slots_;
  std::vector<RunSummary> total_;
};

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string summary_json(const RunSummary& s) {
  const double seconds = std::chrono::duration<double>(s.elapsed).count();
  const double per_s = seconds > 0 ? static_cast<double>(s.ops) / seconds : 0.0;
  std::string errors;
  std::uint64_t error_total = 0;
  for (const auto& [kind, n] : s.errors) {
    errors += fmt::format("{}{}: {}", errors.empty() ? "" : ", ", json_string(kind), n);
    error_total += n;
  }
  const LatencyHistogram& h = s.latency;
  return fmt::format(
      R"({{"ops": {}, "seconds": {:.3f}, "ops_per_s": {:.1f}, "latency_ns": {{"p50": {}, "p99": {}, "p999": {}, "max": {}, "mean": {:.0f}}}, "error_total": {}, "errors": {{{}}}}})",
      s.ops, seconds, per_s, h.percentile(0.5), h.percentile(0.99), h.percentile(0.999), h.max(), h.mean(), error_total,
      errors);
}

}  // namespace

RunResult run(const Workload& workload, const RunOptions& options) {
  RunResult result;
  result.kinds = workload.kinds;
  const std::size_t kinds = std::max<std::size_t>(workload.kinds.size(), 1);
  const unsigned workers = std::max(options.workers, 1u);
  Collector collector(kinds, workers);

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> next_op{0};
  std::atomic<unsigned> running{workers};
  std::mutex setup_mutex;
  std::optional<std::string> setup_error;
  std::latch ready(workers);
  std::latch go(1);
  Clock::time_point start;  // written before `go` opens, read after
  std::mutex done_mutex;
  std::condition_variable done_cv;
  Clock::time_point last_done = Clock::now();

  const auto worker_main = [&](unsigned w) {
    Operation operation;
    try {
      operation = workload.make_worker(w);
    } catch (const std::exception& e) {
      std::lock_guard lock(setup_mutex);
      if (!setup_error) setup_error = fmt::format("worker {}: {}", w, e.what());
    }
    if (!operation) {
      std::lock_guard lock(setup_mutex);
      if (!setup_error) setup_error = fmt::format("worker {} could not start", w);
    }
    ready.count_down();
    go.wait();
    const bool run_it = operation && !stop.load();
    const std::optional<Clock::time_point> deadline =
        options.duration ? std::optional(start + *options.duration) : std::nullopt;
    std::optional<Pacer> pacer;
    if (options.rate) pacer.emplace(*options.rate, start, w, workers);
    while (run_it && !stop.load(std::memory_order_relaxed)) {
      std::uint64_t op = 0;
      Clock::time_point began;
      if (pacer) {
        began = pacer->next();
        op = w + static_cast<std::uint64_t>(workers) * (pacer->issued() - 1);
        if (deadline && began >= *deadline) break;
        std::this_thread::sleep_until(began);  // returns at once when late
      } else {
        op = next_op.fetch_add(1, std::memory_order_relaxed);
        began = Clock::now();
        if (deadline && began >= *deadline) break;
      }
      if (options.ops && op >= *options.ops) break;
      Outcome outcome;
      try {
        outcome = operation(op);
      } catch (const std::exception&) {
        outcome.error = "Exception";
      }
      collector.record(w, outcome, Pacer::since(began, Clock::now()));
    }
    // The connection (whatever the operation holds) closes here, on the worker's thread.
    operation = nullptr;
    std::lock_guard lock(done_mutex);
    last_done = std::max(last_done, Clock::now());
    if (--running == 0) done_cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (unsigned w = 0; w < workers; ++w) threads.emplace_back(worker_main, w);
  ready.wait();
  if (setup_error) stop = true;
  start = Clock::now();
  go.count_down();

  Clock::time_point tick = start;
  for (;;) {
    const Clock::time_point next_tick = tick + options.progress_interval;
    std::unique_lock lock(done_mutex);
    const bool all_done = done_cv.wait_until(lock, next_tick, [&] { return running.load() == 0; });
    lock.unlock();
    if (all_done) break;
    RunSummary interval = collector.collect();
    interval.elapsed = next_tick - tick;
    tick = next_tick;
    if (options.on_progress && !setup_error) options.on_progress(tick - start, interval);
  }
  for (auto& thread : threads) thread.join();
  const Clock::time_point end = last_done;
  std::ignore = collector.collect();

  result.setup_error = setup_error;
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start);
  result.total.elapsed = elapsed;
  result.total.target_rate = options.rate;
  for (RunSummary& summary : collector.totals()) {
    summary.elapsed = elapsed;
    summary.target_rate = options.rate;
    merge_into(result.total, summary);
    result.per_kind.push_back(std::move(summary));
  }
  result.per_kind.resize(workload.kinds.size());
  return result;
}

std::string to_json(const RunResult& result) {
  std::string out = summary_json(result.total);
  out.pop_back();  // the closing brace: the kinds go inside
  out += fmt::format(R"(, "target_rate": {})",
                     result.total.target_rate ? fmt::format("{:.1f}", *result.total.target_rate) : std::string("null"));
  out += R"(, "kinds": {)";
  for (std::size_t k = 0; k < result.kinds.size() && k < result.per_kind.size(); ++k) {
    out += fmt::format("{}{}: {}", k == 0 ? "" : ", ", json_string(result.kinds[k]), summary_json(result.per_kind[k]));
  }
  out += "}";
  if (result.setup_error) out += fmt::format(R"(, "setup_error": {})", json_string(*result.setup_error));
  return out + "}";
}

}  // namespace elfin::loadgen
