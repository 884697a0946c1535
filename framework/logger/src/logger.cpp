#include <elfin/logger/logger.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/context.hpp>
#include <elfin/handle.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/signal.hpp>
#include <elfin/system_view.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::logger {

namespace {

// Where lines go: a borrowed standard stream or a file of our own, opened for appending.
class Sink {
 public:
  Sink() = default;
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink() { close(); }

  void open(const Config& config) {
    close();
    if (config.sink == "stderr" || config.sink == "stdout") {
      fd_ = config.sink == "stderr" ? STDERR_FILENO : STDOUT_FILENO;
      return;
    }
    if (config.sink != "file") {
      throw std::invalid_argument{
          fmt::format("[system.loggers] sink = \"{}\": expected \"stderr\", \"stdout\" or \"file\"", config.sink)};
    }
    if (config.path.empty()) throw std::invalid_argument{"[system.loggers] sink = \"file\" needs a path"};
    int fd = ::open(config.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw std::runtime_error{
          fmt::format("{}: cannot open the log file: {}", config.path, std::generic_category().message(errno))};
    }
    fd_ = fd;
    owned_ = true;
  }

  /// Writes `text` whole (short writes continue); false on an error.
  bool write(std::string_view text) {
    while (!text.empty()) {
      ssize_t n = ::write(fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  void close() {
    if (owned_) ::close(fd_);
    owned_ = false;
    fd_ = -1;
  }
  int fd_ = -1;
  bool owned_ = false;
};

Task<> exec(Context<Config> ctx) {
  Sink sink;
  Config opened;
  bool is_open = false;
  ctx.attach(Signal(SignalKind::Hangup, ReopenLogFile{}));
  std::string lines;
  auto write_burst = [&](const LogRecord& record) {
    // Take whatever else is queued, so a burst costs one write.
    lines = format_log_line(record);
    std::uint64_t count = 1;
    while (count < 256) {
      auto next = ctx.try_recv();
      if (!next) break;
      if (const auto* more = next->get<LogRecord>()) {
        lines += format_log_line(*more);
        ++count;
      } else if (next->is<ReopenLogFile>()) {
        std::ignore = sink.write(lines);
        lines.clear();
        sink.open(opened);
      }
    }
    if (sink.write(lines)) metrics::increment_counter("elfin_written_events_total", count);
  };
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const ConfigUpdated&) {
          Config wanted = ctx.config();
          wanted.path = SystemView::of(ctx).resolve_path(wanted.path);
          if (!is_open || wanted.sink != opened.sink || wanted.path != opened.path) {
            sink.open(wanted);
            opened = std::move(wanted);
            is_open = true;
          }
        },
        [&](const ReopenLogFile&) { sink.open(opened); }, write_burst);
  }
}

}  // namespace

Blueprint blueprint() { return ActorGroup().config<Config>().exec(exec); }

}  // namespace elfin::logger

ELFIN_INSTANTIATE_MESSAGE(elfin::logger::ReopenLogFile);
