// Process: a child process for multi-process tests (several `elfin run` nodes on loopback).
//
//   auto node = Process::start({elfin_binary(), "run", topology});
//   REQUIRE(node);
//   CHECK(node->wait_for_output("counter hits = 1", 10s));
//   node->signal(SIGTERM);
//   CHECK(node->wait_exit(10s) == ExitStatus::exited(0));
//
// The child runs in its own process group with stdout and stderr redirected to files (in a TempDir
// of its own unless `log_dir` says where), so a test reads what it printed at any time without
// pipes that could fill up and stall it. Waiting is polling those files (or waitid) with short
// pauses up to a deadline: a test never sleeps "long enough", and a busy machine only makes it
// slower, never wrong. The destructor kills the whole group and reaps it, so a failing test (an
// exception, a REQUIRE) leaves no process behind.
//
// Thread safety: distinct objects: safe. Shared objects: unsafe (one test thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/result.hpp>

#include "temp_dir.hpp"

namespace elfin::test {

/// How a process ended: an exit code, or the signal that killed it.
struct ExitStatus {
  int code = 0;    ///< exit code (when `signal` is 0)
  int signal = 0;  ///< the signal that killed it, or 0 if it exited

  [[nodiscard]] static ExitStatus exited(int code) { return {code, 0}; }
  [[nodiscard]] static ExitStatus killed_by(int signo) { return {0, signo}; }
  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};
/// "exit code 3" / "killed by signal 9 (Killed)", for Catch2's messages.
[[nodiscard]] std::string to_string(const ExitStatus& status);
std::ostream& operator<<(std::ostream& out, const ExitStatus& status);

struct ProcessOptions {
  /// The child's working directory; empty: the test's.
  std::filesystem::path cwd{};
  /// Added to (or replacing in) the test's environment.
  std::vector<std::pair<std::string, std::string>> env{};
  /// Where `stdout.log` and `stderr.log` go (created if needed); empty: a TempDir owned by the
  /// Process (removed with it). Give one to keep the logs of a node across restarts.
  std::filesystem::path log_dir{};
  /// Prefix of the two log files' names (`<name>.stdout.log`), so nodes can share a `log_dir`.
  std::string name = "process";
};

/// Where a process's output stood at some moment (see `Process::mark`): waits and reads from a
/// mark see only what was printed after it.
struct OutputMark {
  std::size_t out = 0;
  std::size_t err = 0;
};

class Process {
 public:
  /// Starts `argv[0]` (a path; not searched in PATH) with `argv`. An error text if it cannot be
  /// spawned (no such file, not executable); a program that starts and fails is a process that
  /// exits non-zero.
  [[nodiscard]] static Result<Process, std::string> start(std::vector<std::string> argv, ProcessOptions options = {});

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  /// Kills the process group (SIGKILL) if the process has not been reaped, and reaps it.
  ~Process();

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] const std::vector<std::string>& argv() const { return argv_; }

  /// Polls the output (stdout and stderr, each from `since`) until `pattern` is found, the process
  /// has exited without printing it, or `timeout` passes.
  [[nodiscard]] bool wait_for_output(const std::regex& pattern, std::chrono::milliseconds timeout,
                                     OutputMark since = {});
  [[nodiscard]] bool wait_for_output(std::string_view text, std::chrono::milliseconds timeout, OutputMark since = {});
  /// Where the output stands now.
  [[nodiscard]] OutputMark mark() const;
  /// Everything printed so far (after `since`): stdout, then stderr.
  [[nodiscard]] std::string output(OutputMark since = {}) const;
  [[nodiscard]] std::string stdout_text(std::size_t since = 0) const;
  [[nodiscard]] std::string stderr_text(std::size_t since = 0) const;
  [[nodiscard]] const std::filesystem::path& stdout_path() const { return stdout_path_; }
  [[nodiscard]] const std::filesystem::path& stderr_path() const { return stderr_path_; }

  /// Sends `signo` to the process (not its group). False if it is already reaped or gone.
  bool signal(int signo);
  /// SIGKILL to the whole process group, as `kill -9` of a node.
  bool kill();
  /// Waits up to `timeout` for the process to end; its status, or nullopt if it still runs.
  /// Once it has ended, anything left in its group is killed before it is reaped (so the group's
  /// id cannot be reused meanwhile).
  [[nodiscard]] std::optional<ExitStatus> wait_exit(std::chrono::milliseconds timeout);
  /// The status if it has ended and been reaped by `wait_exit`.
  [[nodiscard]] const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  Process() = default;
  bool reap_if_ended();
  void kill_and_reap() noexcept;
  /// The two public waits: `found` is asked about each stream's text since the mark.
  bool wait_for_output(const std::function<bool(const std::string&)>& found, std::chrono::milliseconds timeout,
                       OutputMark since);

  pid_t pid_ = -1;
  std::vector<std::string> argv_;
  std::unique_ptr<TempDir> own_logs_;
  std::filesystem::path stdout_path_;
  std::filesystem::path stderr_path_;
  std::optional<ExitStatus> status_;
};

/// A TCP port on 127.0.0.1 that was free a moment ago: bound to port 0, read back, closed. Another
/// process may take it before the test's node binds it (a small race), so tests that start nodes
/// retry start-up with fresh ports when a node reports "address in use" (`address_in_use`).
[[nodiscard]] std::uint16_t free_tcp_port();
/// Whether `output` says a listen failed because the port was taken.
[[nodiscard]] bool address_in_use(std::string_view output);

/// The `elfin` binary of this build (from CMake: `$<TARGET_FILE:elfin>`).
[[nodiscard]] std::string elfin_binary();
/// `elfin-demo`, the command line with the examples' groups (`$<TARGET_FILE:elfin_demo>`).
[[nodiscard]] std::string demo_binary();
/// The source tree's root, for files such as examples/ping_pong/topology.toml.
[[nodiscard]] std::filesystem::path source_dir();

/// Writes each `{name, text}` into `dir` (TempDir::write for several files); returns the paths.
std::vector<std::string> write_files(const TempDir& dir,
                                     const std::vector<std::pair<std::string_view, std::string_view>>& files);

}  // namespace elfin::test
