// A redis-server of the test's own: started on a free loopback port in a temporary directory
// (no persistence), waited for with a deadline, stopped (SIGTERM, then SIGKILL) when the object
// goes. If redis-server is not installed, the constructor throws with a message saying so (CI
// installs it through .ci/deps).
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <hiredis.h>

#include "../eventually.hpp"
#include "../temp_dir.hpp"

extern char** environ;

namespace elfin::test {

class RedisServer {
 public:
  RedisServer() {
    const std::string binary = find_binary();
    if (binary.empty()) {
      throw std::runtime_error("redis-server is not installed (apt install redis-server; .ci/deps installs it)");
    }
    port_ = free_port();
    std::vector<std::string> args{
        binary,    "--port",    std::to_string(port_), "--bind", "127.0.0.1",   "--dir", dir_.path().string(),
        "--save",  "",          "--appendonly",        "no",     "--daemonize", "no",    "--loglevel",
        "warning", "--logfile", dir_.file("redis.log")};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error("cannot start redis-server");
    }
    wait_ready();
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer() { stop(); }

  [[nodiscard]] std::uint16_t port() const { return port_; }

  /// Stops the server now (a test of an unreachable store).
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    // Polled: waitpid has no timeout.
    const bool ended = eventually([this] { return ::waitpid(pid_, nullptr, WNOHANG) != 0; }, std::chrono::seconds(5),
                                  std::chrono::milliseconds(2));
    if (!ended) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

 private:
  static std::string find_binary() {
    for (const char* candidate : {"/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"}) {
      if (std::filesystem::exists(candidate)) return candidate;
    }
    return {};
  }

  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("cannot find a free port: no socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd);
      throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  /// PING until PONG, for at most 10 s: the server is starting, and nothing but its port says
  /// when it is ready.
  void wait_ready() {
    bool exited = false;
    const bool ready = eventually(
        [&] {
          exited = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
          return exited || answers_ping();
        },
        std::chrono::seconds(10), std::chrono::milliseconds(5));
    if (exited) {
      pid_ = -1;
      throw std::runtime_error(fmt::format("redis-server exited at start: {}", read_file(dir_.file("redis.log"))));
    }
    if (!ready) throw std::runtime_error("redis-server did not answer in 10 s");
  }

  [[nodiscard]] bool answers_ping() const {
    timeval tv{0, 200'000};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr) return false;
    bool ok = false;
    if (c->err == 0) {
      auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
      ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
      if (reply != nullptr) freeReplyObject(reply);
    }
    redisFree(c);
    return ok;
  }

  TempDir dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace elfin::test
