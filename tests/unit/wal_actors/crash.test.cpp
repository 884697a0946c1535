// kill -9 during heavy appends from many partitions, then recovery: every acknowledged append is
// there, nothing was invented, order per partition is kept. (kill -9 leaves the page cache to the
// kernel, so this checks the actors' bookkeeping across a process death; the power-loss tests in
// wal_actors.test.cpp check what fdatasync guarantees.)
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "temp_dir.hpp"
#include "wal_actors_test_support.hpp"

extern char** environ;

TEST_CASE("after kill -9 during heavy appends every acknowledged append is recovered, in order", "[wal_actors]") {
  elfin::test::TempDir dir;
  const std::string wal_dir = dir.file("wal");
  constexpr std::uint64_t kPartitions = 32;
  constexpr std::uint64_t kAcksBeforeKill = 2000;
  constexpr std::uint32_t kWalCount = 4;
  constexpr std::size_t kPayload = 100;

  int out[2];
  REQUIRE(::pipe(out) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  const std::string partitions = std::to_string(kPartitions), count = std::to_string(kWalCount),
                    payload = std::to_string(kPayload);
  std::string helper = WAL_CRASH_HELPER;
  char* args[] = {helper.data(),
                  const_cast<char*>(wal_dir.c_str()),
                  const_cast<char*>(partitions.c_str()),
                  const_cast<char*>(count.c_str()),
                  const_cast<char*>(payload.c_str()),
                  nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, helper.c_str(), &actions, nullptr, args, environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);

  // Read acknowledgements until enough were printed, then kill the process mid-run.
  std::map<std::uint64_t, std::uint64_t> acked;
  std::uint64_t acks = 0;
  std::string pending;
  char buffer[4096];
  bool killed = false;
  for (;;) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(n));
    std::size_t line_end;
    while ((line_end = pending.find('\n')) != std::string::npos) {
      std::istringstream line(pending.substr(0, line_end));
      pending.erase(0, line_end + 1);
      std::uint64_t p = 0, i = 0;
      line >> p >> i;
      REQUIRE(i == acked[p] + 1);  // acknowledged in order, one at a time
      acked[p] = i;
      ++acks;
    }
    if (!killed && acks >= kAcksBeforeKill) {
      REQUIRE(::kill(pid, SIGKILL) == 0);
      killed = true;
    }
  }
  ::close(out[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(killed);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  wal_test::Running group = wal_test::start({}, wal_test::config(wal_dir, kWalCount));
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    INFO("partition " << p);
    const auto range = group.read(p);
    CHECK(range.last_index >= acked[p]);      // nothing acknowledged is lost
    CHECK(range.last_index <= acked[p] + 1);  // at most the one request in flight, nothing invented
    wal_test::check_entries(range, 1, range.last_index, kPayload);
  }
}
