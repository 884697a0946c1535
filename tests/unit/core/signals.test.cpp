// elfin::run stops the system on SIGTERM/SIGINT, gracefully, and exits at once on a second signal.
// Each case forks: the child runs a real system under elfin::run, the parent signals it and
// watches what it reports through a pipe and how it exits. ctest runs every case in a fresh
// process, so the fork happens before any runtime thread exists.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <thread>

#include <elfin/elfin.hpp>

#include "../eventually.hpp"

using namespace elfin;

namespace {

int g_report_fd = -1;  // the child's end of the pipe; actors write one byte per event

void report(char event) { std::ignore = ::write(g_report_fd, &event, 1); }

// Reports 'R' when running, 'T' when its mailbox was closed by the polite Terminate.
Task<> closing_actor(Context<> ctx) {
  report('R');
  while (auto envelope = co_await ctx.recv()) {
  }
  report('T');
}

// TerminationPolicy::manually and never closes: the system cannot finish on its own.
Task<> stubborn_actor(Context<> ctx) {
  report('R');
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Terminate>()) report('M');
  }
}

struct Child {
  pid_t pid = -1;
  int events = -1;  // read end of the pipe

  /// Waits up to `timeout` for the next event byte; nullopt on timeout or EOF.
  std::optional<char> next_event(std::chrono::milliseconds timeout) const {
    pollfd fd{events, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
    char event = 0;
    if (::read(events, &event, 1) != 1) return std::nullopt;
    return event;
  }
  /// Waits up to `timeout` for the child to exit; its wait status, or nullopt.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) const {
    int status = 0;
    // Polled: waitpid has no timeout.
    if (!elfin::test::eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout,
                                 std::chrono::milliseconds(5))) {
      return std::nullopt;
    }
    return status;
  }
  ~Child() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (events >= 0) ::close(events);
  }
};

Child spawn_child(Blueprint blueprint) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  Child child;
  child.pid = ::fork();
  REQUIRE(child.pid >= 0);
  if (child.pid == 0) {
    ::close(fds[0]);
    g_report_fd = fds[1];
    Topology topology;
    topology.local("workers").mount(std::move(blueprint));
    StartOptions options;
    options.workers = 2;
    ::_exit(run(std::move(topology), std::move(options)));
  }
  ::close(fds[1]);
  child.events = fds[0];
  return child;
}

constexpr auto kDeadline = std::chrono::milliseconds(10'000);

}  // namespace

TEST_CASE("SIGTERM terminates a system run by elfin::run gracefully", "[core][signals]") {
  int signo = GENERATE(SIGTERM, SIGINT);
  Child child = spawn_child(ActorGroup().exec(closing_actor));
  REQUIRE(child.next_event(kDeadline) == 'R');
  REQUIRE(::kill(child.pid, signo) == 0);
  CHECK(child.next_event(kDeadline) == 'T');  // the actor saw its mailbox close and finished
  auto status = child.wait_exit(kDeadline);
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
}

TEST_CASE("a second signal exits at once while termination is still waiting", "[core][signals]") {
  Child child = spawn_child(ActorGroup().termination_policy(TerminationPolicy::manually()).exec(stubborn_actor));
  REQUIRE(child.next_event(kDeadline) == 'R');
  REQUIRE(::kill(child.pid, SIGTERM) == 0);
  REQUIRE(child.next_event(kDeadline) == 'M');                               // got the polite Terminate and ignored it
  CHECK_FALSE(child.wait_exit(std::chrono::milliseconds(200)).has_value());  // still terminating
  REQUIRE(::kill(child.pid, SIGINT) == 0);
  auto status = child.wait_exit(kDeadline);
  REQUIRE(status.has_value());
  REQUIRE(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 128 + SIGINT);
}
