// The process harness itself (support/process.hpp), on real processes: `elfin run` of the
// ping-pong example stopped by SIGTERM and by kill -9, exit codes, captured output, and no
// process left behind by a Process that goes out of scope.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include "eventually.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::ExitStatus;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

// Enough rallies that the game is still on when the test stops it.
constexpr const char* kEndlessGame = "[pingers]\nrounds = 1000000000\n";

Process start_ping_pong(const TempDir& dir) {
  const auto config = dir.write("endless.config.toml", kEndlessGame);
  const auto topology = (elfin::test::source_dir() / "examples/ping_pong/topology.toml").string();
  auto process = Process::start({elfin::test::demo_binary(), "run", topology, "--config", config});
  if (!process) throw std::runtime_error(process.error());
  return std::move(process.value());
}

// A process is gone once kill(pid, 0) fails, or it is a zombie nobody has reaped yet (an
// orphan waits for the container's init).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field;
  std::string comm;
  char state = '?';
  stat >> pid_field >> comm >> state;
  return state == 'Z';
}

bool wait_gone(pid_t pid, std::chrono::milliseconds timeout) {
  return elfin::test::eventually([&] { return gone(pid); }, timeout, 10ms);
}

}  // namespace

TEST_CASE("elfin run stops cleanly with exit code 0 on SIGTERM", "[integration][process]") {
  TempDir dir;
  auto node = start_ping_pong(dir);
  REQUIRE(node.wait_for_output("ball 3 is back", 20s));
  REQUIRE(node.signal(SIGTERM));
  const auto status = node.wait_exit(30s);
  INFO(node.stderr_text());
  REQUIRE(status);
  CHECK(*status == ExitStatus::exited(0));
}

TEST_CASE("a node killed with kill -9 is reported as killed by SIGKILL", "[integration][process]") {
  TempDir dir;
  auto node = start_ping_pong(dir);
  REQUIRE(node.wait_for_output(std::regex("ball [0-9]+ is back"), 20s));
  REQUIRE(node.kill());
  const auto status = node.wait_exit(10s);
  REQUIRE(status);
  CHECK(*status == ExitStatus::killed_by(SIGKILL));
  CHECK(elfin::test::to_string(*status) == "killed by signal 9 (Killed)");
}

TEST_CASE("a process's exit code and both of its output streams are reported", "[integration][process]") {
  auto process = Process::start({"/bin/sh", "-c", "echo to stdout; echo to stderr >&2; exit 3"});
  REQUIRE(process);
  const auto status = process->wait_exit(10s);
  REQUIRE(status);
  CHECK(*status == ExitStatus::exited(3));
  CHECK(process->stdout_text() == "to stdout\n");
  CHECK(process->stderr_text() == "to stderr\n");
  SECTION("a wait for output the process never printed ends with false once it has exited") {
    const auto started = std::chrono::steady_clock::now();
    CHECK_FALSE(process->wait_for_output("never printed", 60s));
    CHECK(std::chrono::steady_clock::now() - started < 30s);  // did not wait for the whole 60 s
  }
}

TEST_CASE("waits and reads from a mark see only what was printed after it", "[integration][process]") {
  TempDir dir;
  auto node = start_ping_pong(dir);
  REQUIRE(node.wait_for_output("ball 2 is back", 20s));
  const auto mark = node.mark();
  CHECK(mark.out > 0);
  // "ball 2 is back" is before the mark; later rallies are after it.
  REQUIRE(node.wait_for_output(std::regex("ball [0-9]+ is back"), 20s, mark));
  CHECK(node.output(mark).find("ball 2 is back") == std::string::npos);
}

TEST_CASE("a process that cannot be started is an error, not an exception", "[integration][process]") {
  auto process = Process::start({"/no/such/program"});
  REQUIRE_FALSE(process);
  CHECK(process.error().find("/no/such/program") != std::string::npos);
}

TEST_CASE("a Process going out of scope kills its whole process group", "[integration][process]") {
  pid_t leader = -1;
  pid_t child = -1;
  {
    // The shell starts a child in its group and waits: both must die with the Process.
    auto process = Process::start({"/bin/sh", "-c", "sleep 1000 & echo child $!; wait"});
    REQUIRE(process);
    leader = process->pid();
    REQUIRE(process->wait_for_output(std::regex("child [0-9]+\n"), 10s));
    child = std::stoi(process->stdout_text().substr(6));
    REQUIRE(::kill(leader, 0) == 0);
    REQUIRE(::kill(child, 0) == 0);
  }
  CHECK(::kill(leader, 0) == -1);  // reaped by the destructor
  CHECK(wait_gone(child, 10s));
}

TEST_CASE("free_tcp_port gives a port that can be bound on 127.0.0.1", "[integration][process]") {
  const auto port = elfin::test::free_tcp_port();
  REQUIRE(port > 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));  // NOLINT
  ::close(fd);
  CHECK(bound == 0);
  CHECK(elfin::test::address_in_use("listen tcp://127.0.0.1:9301: Address already in use"));
  CHECK_FALSE(elfin::test::address_in_use("listening on tcp://127.0.0.1:9301"));
}
