// The shard manager as a real node: `elfin run` of a manager topology, then
// `elfin shard --assignments` joining the cluster as a short-lived node to print its live map.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "process.hpp"
#include "shard_manager_node.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

constexpr auto kTimeout = 30s;

}  // namespace

TEST_CASE("shard manager: elfin shard --assignments prints a running manager's map", "[integration]") {
  TempDir dir;
  auto manager = elfin::test::start_shard_manager(
      dir,
      [&](std::uint16_t port) {
        return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
secret = "s3cret"

[sharding.manager]
shard_function = "jump-xxh64/1:16"
storage.path = "{}"
)",
                           port, dir.file("shards.state"));
      },
      kTimeout);
  const std::uint16_t port = manager.port;

  auto asked = Process::start({elfin::test::elfin_binary(), "shard", "--assignments", "--manager",
                               fmt::format("tcp://127.0.0.1:{}", port), "--secret", "s3cret", "--timeout", "20"},
                              {.log_dir = dir.path(), .name = "asked"});
  REQUIRE(asked);
  const auto status = asked->wait_exit(kTimeout);
  INFO(asked->output());
  REQUIRE(status);
  CHECK(status->code == 0);
  CHECK(asked->stdout_text() == "epoch 0, jump-xxh64/1:16, 0 pods\nunassigned\t16 shards\t0-15\n");

  // The wrong secret: refused by the manager's node, so no answer in time.
  auto refused = Process::start({elfin::test::elfin_binary(), "shard", "--assignments", "--manager",
                                 fmt::format("tcp://127.0.0.1:{}", port), "--secret", "wrong", "--timeout", "2"},
                                {.log_dir = dir.path(), .name = "refused"});
  REQUIRE(refused);
  const auto refused_status = refused->wait_exit(kTimeout);
  REQUIRE(refused_status);
  CHECK(refused_status->code == 1);
  CHECK(refused->stderr_text().find("did not answer within 2 s") != std::string::npos);
}
