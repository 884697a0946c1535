#include "observers/memory_tracker.hpp"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace elfin::detail {

namespace {

constexpr const char* kMeminfo = "/proc/meminfo";
constexpr const char* kStatm = "/proc/self/statm";

Result<std::string, std::string> read_text(const char* path) {
  std::ifstream file(path);
  if (!file.is_open()) return Err{fmt::format("{}: cannot open it", path)};
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

Result<MemoryUsage, std::string> read_usage() {
  auto meminfo = read_text(kMeminfo);
  if (!meminfo) return Err{meminfo.error()};
  auto total = parse_meminfo_total(*meminfo);
  if (!total) return Err{fmt::format("{}: {}", kMeminfo, total.error())};
  auto statm = read_text(kStatm);
  if (!statm) return Err{statm.error()};
  auto rss = parse_statm_rss(*statm, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  if (!rss) return Err{fmt::format("{}: {}", kStatm, rss.error())};
  return MemoryUsage{*total, *rss};
}

/// The value of a `Key:   12345 kB` line, in bytes.
bool read_field(std::string_view line, std::string_view key, std::uint64_t& out) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') return false;
  std::string_view rest = line.substr(key.size() + 1);
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc{}) return false;
  const std::string_view unit{end, static_cast<std::size_t>(rest.data() + rest.size() - end)};
  out = unit.find("kB") != std::string_view::npos ? value * 1024 : value;
  return true;
}

}  // namespace

Result<std::uint64_t, std::string> parse_meminfo_total(std::string_view text) {
  std::uint64_t total = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    if (read_field(text.substr(0, eol), "MemTotal", total) && total != 0) return total;
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
  }
  return Err{std::string{"no MemTotal line"}};
}

Result<std::uint64_t, std::string> parse_statm_rss(std::string_view text, std::uint64_t page_size) {
  // "size resident shared text lib data dt", all in pages.
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return Err{std::string{"no resident field"}};
  text.remove_prefix(space + 1);
  std::uint64_t pages = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pages);
  if (ec != std::errc{}) return Err{std::string{"the resident field is not a number"}};
  return pages * page_size;
}

MemoryTracker::MemoryTracker(TimerService& timers, std::chrono::nanoseconds interval, double threshold,
                             std::function<void(std::string)> on_exceeded,
                             std::function<void(LogLevel, std::string)> log)
    : timers_(timers),
      interval_(interval),
      threshold_(threshold),
      on_exceeded_(std::move(on_exceeded)),
      log_(std::move(log)) {}

MemoryTracker::~MemoryTracker() { stop(); }

void MemoryTracker::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  running_ = true;
  schedule_locked();
}

void MemoryTracker::stop() {
  std::lock_guard lock(mu_);
  running_ = false;
  if (timer_ != 0) std::ignore = timers_.cancel(std::exchange(timer_, 0));
}

void MemoryTracker::schedule_locked() {
  timer_ = timers_.schedule_after(interval_, [this] { check(); });
}

void MemoryTracker::check() {
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    timer_ = 0;
  }
  auto usage = read_usage();
  if (!usage) {
    log_(LogLevel::Warn, fmt::format("memory tracker stops: {}", usage.error()));
    return;
  }
  const double used = usage->used_ratio();
  if (used > threshold_) {
    std::string reason = fmt::format(
        "resident memory {} MiB is {:.3g}% of the machine's {} MiB, above the threshold of {:.3g}% "
        "([system.runtime] memory_threshold)",
        usage->rss_bytes >> 20, used * 100, usage->total_bytes >> 20, threshold_ * 100);
    log_(LogLevel::Error, fmt::format("terminating the system: {}", reason));
    {
      std::lock_guard lock(mu_);
      running_ = false;
    }
    on_exceeded_(std::move(reason));
    return;
  }
  std::lock_guard lock(mu_);
  if (running_) schedule_locked();
}

}  // namespace elfin::detail
