#include "bench_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include <elfin/internal/dump_storage.hpp>
#include <elfin/system.hpp>

#if defined(ELFIN_HAVE_CAF)
#include <elfin_bench/caf_peer.hpp>
#endif
#if defined(ELFIN_HAVE_SOBJECTIZER)
#include <elfin_bench/so_peer.hpp>
#endif

namespace elfin_bench {

bool caf_available() {
#if defined(ELFIN_HAVE_CAF)
  return caf_peer::available();
#else
  return false;
#endif
}

bool so_available() {
#if defined(ELFIN_HAVE_SOBJECTIZER)
  return so_peer::available();
#else
  return false;
#endif
}

namespace {

// --- the driver → main channel ------------------------------------------------------------------
// One slot, reset by run_elfin before each System starts. Only one System runs at a time and it is
// joined before the next starts, so a report always belongs to the current run.
struct Slot {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Figure figure;
  std::string error;
};
Slot& slot() {
  static Slot s;
  return s;
}

// One run may not take longer than this; CAF's slowest case (skynet, 2 threads) takes ~7 s.
constexpr std::chrono::seconds kRunDeadline{300};

void usage(std::string_view bench, const std::vector<Case>& cases) {
  const std::string name(bench);
  std::fprintf(stderr,
               "usage: bench_%s [--reps N] [--quick] [--case NAME] [--threads N] [--no-caf] [--no-so]\n"
               "                  [--no-warmup] [--variant NAME]\ncases:",
               name.c_str());
  for (const auto& c : cases) std::fprintf(stderr, " %s", c.name.c_str());
  std::fprintf(stderr, "\n");
}

bool parse_unsigned(std::string_view text, unsigned& out) {
  const char* const first = text.data();
  const char* const last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc{} && ptr == last;
}

}  // namespace

void report(Figure figure) {
  auto& s = slot();
  {
    std::lock_guard lock(s.mu);
    if (s.done) return;
    s.done = true;
    s.figure = figure;
  }
  s.cv.notify_all();
}

void report_error(std::string why) {
  auto& s = slot();
  {
    std::lock_guard lock(s.mu);
    if (s.done) return;
    s.done = true;
    s.error = std::move(why);
  }
  s.cv.notify_all();
}

Figure run_elfin(std::string_view what, elfin::Topology topology, std::string config_toml, unsigned threads) {
  auto& s = slot();
  {
    std::lock_guard lock(s.mu);
    s.done = false;
    s.figure = {};
    s.error.clear();
  }
  elfin::StartOptions options;
  options.workers = threads;
  options.config_toml = std::move(config_toml);
  options.config_source = fmt::format("<{} config>", what);
  // Everything has finished or waits in recv() by the time we terminate; keep a wedged run from
  // hanging the benchmark for the default 45 s.
  options.terminate_closing_after = std::chrono::milliseconds{5'000};
  options.terminate_give_up_after = std::chrono::milliseconds{5'000};
  auto system = elfin::System::start(std::move(topology), std::move(options));
  if (!system) throw std::runtime_error(fmt::format("{}: {}", what, system.error()));

  Figure figure;
  std::string error;
  {
    std::unique_lock lock(s.mu);
    if (!s.cv.wait_for(lock, kRunDeadline, [&] { return s.done; })) {
      std::fprintf(stderr, "%.*s: no result after %llds; giving up\n", static_cast<int>(what.size()), what.data(),
                   static_cast<long long>(kRunDeadline.count()));
      std::fflush(stdout);
      std::_Exit(3);
    }
    figure = s.figure;
    error = s.error;
  }
  system->terminate("benchmark run finished");
  system->join();
  if (const auto* dumps = system->dump_storage()) {  // on stderr: stdout keeps one line per case
    const auto c = dumps->counters();
    std::fprintf(stderr, "  %.*s: dumps recorded %llu, lost (storage full) %llu, limited %llu\n",
                 static_cast<int>(what.size()), what.data(), static_cast<unsigned long long>(c.emitted),
                 static_cast<unsigned long long>(c.lost), static_cast<unsigned long long>(c.limited));
  }
  if (!error.empty()) throw std::runtime_error(fmt::format("{}: {}", what, error));
  return figure;
}

namespace {
double rate(const Figure& f) { return f.seconds > 0 ? static_cast<double>(f.ops) / f.seconds : 0.0; }
}  // namespace

Stats summarize(std::vector<Figure> figures) {
  Stats stats;
  if (figures.empty()) return stats;
  std::sort(figures.begin(), figures.end(), [](const Figure& a, const Figure& b) { return rate(a) < rate(b); });
  // The median run (the lower middle one for an even count, i.e. never flattering).
  const Figure& mid = figures[(figures.size() - 1) / 2];
  stats.ops = mid.ops;
  stats.ops_per_s = rate(mid);
  stats.ns_per_op = mid.ops > 0 ? mid.seconds * 1e9 / static_cast<double>(mid.ops) : 0.0;
  stats.min_ops_per_s = rate(figures.front());
  stats.max_ops_per_s = rate(figures.back());
  return stats;
}

void print_line(std::string_view bench, std::string_view name, const Stats& elfin, const std::optional<Stats>& caf,
                std::string_view extra, std::string_view peer, const std::optional<SecondPeer>& second) {
  std::string line = fmt::format("bench={} case={} elfin_ops_per_s={:.0f} elfin_ns_per_op={:.1f}", bench, name,
                                 elfin.ops_per_s, elfin.ns_per_op);
  if (caf && caf->ops_per_s > 0) {
    line += fmt::format(" {0}_ops_per_s={1:.0f} {0}_ns_per_op={2:.1f} ratio={3:.2f}", peer, caf->ops_per_s,
                        caf->ns_per_op, elfin.ops_per_s / caf->ops_per_s);
  } else {
    line += fmt::format(" {0}_ops_per_s=n/a {0}_ns_per_op=n/a ratio=n/a", peer);
  }
  line += fmt::format(" ops={} elfin_range={:.0f}..{:.0f}", elfin.ops, elfin.min_ops_per_s, elfin.max_ops_per_s);
  if (caf && caf->ops_per_s > 0)
    line += fmt::format(" {}_range={:.0f}..{:.0f}", peer, caf->min_ops_per_s, caf->max_ops_per_s);
  if (second) {
    const auto& other = second->stats;
    if (other && other->ops_per_s > 0) {
      line += fmt::format(" {0}_ops_per_s={1:.0f} {0}_ns_per_op={2:.1f} {0}_ratio={3:.2f} {0}_range={4:.0f}..{5:.0f}",
                          second->name, other->ops_per_s, other->ns_per_op, elfin.ops_per_s / other->ops_per_s,
                          other->min_ops_per_s, other->max_ops_per_s);
    } else {
      line += fmt::format(" {0}_ops_per_s=n/a {0}_ns_per_op=n/a {0}_ratio=n/a", second->name);
    }
  }
  line += extra;
  std::puts(line.c_str());
  std::fflush(stdout);
}

namespace {

// Runs alternate (elfin, peer, second peer, elfin, peer, ...) so that a burst of load from
// elsewhere on the machine hits every side alike instead of skewing the ratios. `second` is run
// when set; with `second_name` empty the line has no second column.
bool run_side_by_side(std::string_view bench, std::string_view name, const Options& opts,
                      const std::function<Figure()>& elfin, const std::function<Figure()>& peer, std::string_view extra,
                      std::string_view peer_name, const std::function<Figure()>& second = {},
                      std::string_view second_name = {}) {
  try {
    if (opts.warmup) {
      std::ignore = elfin();
      if (peer) std::ignore = peer();
      if (second) std::ignore = second();
    }
    std::vector<Figure> ours;
    std::vector<Figure> theirs_runs;
    std::vector<Figure> second_runs;
    for (unsigned i = 0; i < opts.reps; ++i) {
      ours.push_back(elfin());
      if (peer) theirs_runs.push_back(peer());
      if (second) second_runs.push_back(second());
    }
    const Stats mine = summarize(std::move(ours));
    std::optional<Stats> theirs;
    if (peer) theirs = summarize(std::move(theirs_runs));
    std::optional<SecondPeer> second_column;
    if (!second_name.empty()) {
      second_column = SecondPeer{second_name, std::nullopt};
      if (second) second_column->stats = summarize(std::move(second_runs));
    }
    print_line(bench, name, mine, theirs, fmt::format("{} reps={} threads={}", extra, opts.reps, opts.threads),
               peer_name, second_column);
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%.*s case=%.*s error=\"%s\"\n", static_cast<int>(bench.size()), bench.data(),
                static_cast<int>(name.size()), name.data(), e.what());
    std::fflush(stdout);
    return false;
  }
}

}  // namespace

bool run_case(std::string_view bench, std::string_view name, const Options& opts, const std::function<Figure()>& elfin,
              const std::function<Figure()>& caf, std::string_view extra, const std::optional<SoPeer>& so) {
  const bool with_caf = caf && opts.caf && caf_available();
  const bool with_so = so && so->run && opts.so && so_available();
  return run_side_by_side(bench, name, opts, elfin, with_caf ? caf : std::function<Figure()>{}, extra, "caf",
                          with_so ? so->run : std::function<Figure()>{}, so ? "so" : "");
}

bool run_overhead_case(std::string_view bench, std::string_view name, const Options& opts,
                       const std::function<Figure()>& with_feature, const std::function<Figure()>& baseline,
                       std::string_view extra) {
  return run_side_by_side(bench, name, opts, with_feature, baseline, extra, "off");
}

int run_main(std::string_view bench, std::vector<Case> cases, int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) return {};
      return argv[++i];
    };
    if (arg == "--reps") {
      if (!parse_unsigned(value(), opts.reps) || opts.reps == 0) return usage(bench, cases), 2;
    } else if (arg == "--threads") {
      if (!parse_unsigned(value(), opts.threads) || opts.threads == 0) return usage(bench, cases), 2;
    } else if (arg == "--case") {
      opts.only = std::string(value());
    } else if (arg == "--variant") {
      opts.variant = std::string(value());
    } else if (arg == "--quick") {
      opts.quick = true;
    } else if (arg == "--no-caf") {
      opts.caf = false;
    } else if (arg == "--no-so") {
      opts.so = false;
    } else if (arg == "--no-warmup") {
      opts.warmup = false;
    } else {
      usage(bench, cases);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  bool selected_any = false;
  bool ok = true;
  for (const auto& c : cases) {
    if (!opts.only.empty() && opts.only != c.name && opts.only != c.family) continue;
    selected_any = true;
    if (!c.run(opts)) ok = false;
  }
  if (!selected_any) {
    std::fprintf(stderr, "no case named `%s`\n", opts.only.c_str());
    usage(bench, cases);
    return 2;
  }
  return ok ? 0 : 1;
}

int serve_until_stdin_closes(elfin::Topology topology, elfin::StartOptions options, std::string_view program) {
  auto system = elfin::System::start(std::move(topology), std::move(options));
  if (!system) {
    fmt::print(stderr, "{} --serve: {}\n", program, system.error().message());
    return 1;
  }
  char byte = 0;
  while (::read(0, &byte, 1) > 0) {
  }
  system->terminate();
  system->join();
  return 0;
}

}  // namespace elfin_bench
