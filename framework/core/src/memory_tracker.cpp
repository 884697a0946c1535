#include "memory_tracker.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "runtime_log.hpp"

namespace elfin::detail {

namespace {

constexpr const char* kMeminfo = "/proc/meminfo";

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

Result<MemoryUsage, std::string> parse_meminfo(std::string_view text) {
  MemoryUsage usage;
  bool has_total = false;
  bool has_available = false;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    has_total = read_field(line, "MemTotal", usage.total_bytes) || has_total;
    has_available = read_field(line, "MemAvailable", usage.available_bytes) || has_available;
  }
  if (!has_total || !has_available || usage.total_bytes == 0) {
    return Err{std::string{"no MemTotal and MemAvailable lines"}};
  }
  return usage;
}

MemoryTracker::MemoryTracker(TimerService& timers, std::chrono::nanoseconds interval, double threshold,
                             std::function<void(std::string)> on_exceeded)
    : timers_(timers), interval_(interval), threshold_(threshold), on_exceeded_(std::move(on_exceeded)) {}

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
  std::ifstream file(kMeminfo);
  std::stringstream text;
  if (file.is_open()) text << file.rdbuf();
  auto usage =
      file.is_open() ? parse_meminfo(text.str()) : Result<MemoryUsage, std::string>{Err{std::string{"cannot open it"}}};
  if (!usage) {
    log_runtime(LogLevel::Warn, ActorMeta{"system.init", "_"}, "memory tracker stops: {}: {}", kMeminfo, usage.error());
    return;
  }
  const double used = usage->used_ratio();
  if (used > threshold_) {
    std::string reason = fmt::format(
        "memory usage {:.1f}% of {} MiB is above the threshold of {:.1f}% ([system.runtime] "
        "memory_threshold)",
        used * 100, usage->total_bytes >> 20, threshold_ * 100);
    log_runtime(LogLevel::Error, ActorMeta{"system.init", "_"}, "terminating the system: {}", reason);
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
