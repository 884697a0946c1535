// PrometheusProcess: Debian's real `prometheus` server as a child process of a test, scraping
// one target, and a blocking client for its HTTP query API.
//
// The server gets a config file, a TSDB directory and a free loopback port, all inside a
// directory the caller owns; its output goes to `prometheus.log` there (shown when a test fails).
// The destructor stops the server (SIGTERM, then SIGKILL after a grace period) and reaps it, so
// a failing REQUIRE leaves no process behind.
//
// Thread safety: one object per test thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace elfin::integration {

/// The path of `program` on $PATH, or nullopt.
[[nodiscard]] std::optional<std::filesystem::path> find_program(const std::string& program);

/// A loopback TCP port nobody listens on right now (bound, read, released).
[[nodiscard]] unsigned short free_loopback_port();

/// A blocking HTTP/1.0 GET to 127.0.0.1:`port`: the body of a 200 response, or nullopt (refused,
/// timed out, another status). `target` is the path and query, already URL-encoded.
[[nodiscard]] std::optional<std::string> http_get(unsigned short port, const std::string& target,
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(5));

/// `text` with every byte outside [A-Za-z0-9-_.~] percent-encoded (for a query parameter).
[[nodiscard]] std::string url_encode(const std::string& text);

class PrometheusProcess {
 public:
  /// Starts `binary` scraping http://`target`/metrics every second, with its files in `dir`.
  /// Throws std::runtime_error if the process cannot be started.
  PrometheusProcess(const std::filesystem::path& binary, const std::filesystem::path& dir, const std::string& target);
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;
  ~PrometheusProcess();

  [[nodiscard]] unsigned short port() const { return port_; }
  /// Whether the process is still running (it exits at once if its config is bad or the port
  /// was taken meanwhile).
  [[nodiscard]] bool running();
  /// `GET /api/v1/query?query=...`: the parsed JSON, or nullopt while the server is not up.
  [[nodiscard]] std::optional<nlohmann::json> query(const std::string& promql) const;
  /// The server's output so far.
  [[nodiscard]] std::string log() const;

 private:
  std::filesystem::path log_path_;
  unsigned short port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace elfin::integration
