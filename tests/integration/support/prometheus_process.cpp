#include "prometheus_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <asio.hpp>

#include "../../unit/eventually.hpp"

extern char** environ;

namespace elfin::integration {

std::optional<std::filesystem::path> find_program(const std::string& program) {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no test sets the environment
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    auto candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

unsigned short free_loopback_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
  return acceptor.local_endpoint().port();
}

std::optional<std::string> http_get(unsigned short port, const std::string& target, std::chrono::milliseconds timeout) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  asio::error_code ec;
  socket.connect({asio::ip::address_v4::loopback(), port}, ec);
  if (ec) return std::nullopt;
  // Blocking reads and writes that give up after `timeout` (a hung server fails the test, not
  // ctest's timeout).
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const std::string request = fmt::format("GET {} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", target, port);
  asio::write(socket, asio::buffer(request), ec);
  if (ec) return std::nullopt;
  std::string response;
  asio::read(socket, asio::dynamic_buffer(response), ec);  // until the server closes
  if (ec != asio::error::eof) return std::nullopt;
  // "HTTP/1.0 200 OK\r\n..."
  if (response.compare(0, 5, "HTTP/") != 0 || response.find(" 200 ") != response.find(' ')) return std::nullopt;
  const auto body = response.find("\r\n\r\n");
  if (body == std::string::npos) return std::nullopt;
  return response.substr(body + 4);
}

std::string url_encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

PrometheusProcess::PrometheusProcess(const std::filesystem::path& binary, const std::filesystem::path& dir,
                                     const std::string& target)
    : log_path_(dir / "prometheus.log"), port_(free_loopback_port()) {
  const auto config = dir / "prometheus.yml";
  {
    std::ofstream out(config);
    out << "global:\n"
           "  scrape_interval: 1s\n"
           "  evaluation_interval: 1s\n"
           "scrape_configs:\n"
           "  - job_name: elfin\n"
           "    static_configs:\n"
           "      - targets: ['"
        << target << "']\n";
  }
  std::vector<std::string> args{binary.string(), "--config.file=" + config.string(),
                                "--storage.tsdb.path=" + (dir / "data").string(),
                                fmt::format("--web.listen-address=127.0.0.1:{}", port_)};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the test's own thread; a rare message garbled at worst
    throw std::runtime_error(fmt::format("cannot start {}: {}", binary.string(), std::strerror(rc)));
  }
}

PrometheusProcess::~PrometheusProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  // A polite stop lets it close its TSDB; a stuck one is killed after 10 s.
  const bool ended = elfin::test::eventually([this] { return ::waitpid(pid_, nullptr, WNOHANG) != 0; },
                                             std::chrono::seconds(10), std::chrono::milliseconds(10));
  if (!ended) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool PrometheusProcess::running() {
  if (pid_ <= 0) return false;
  if (::waitpid(pid_, nullptr, WNOHANG) == 0) return true;
  pid_ = -1;  // exited and reaped
  return false;
}

std::optional<nlohmann::json> PrometheusProcess::query(const std::string& promql) const {
  auto body = http_get(port_, "/api/v1/query?query=" + url_encode(promql));
  if (!body) return std::nullopt;
  auto json = nlohmann::json::parse(*body, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

std::string PrometheusProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace elfin::integration
