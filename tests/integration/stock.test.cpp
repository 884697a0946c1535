// The guide's tutorial service (examples/stock) as a user runs it: the shipped topology files,
// run by the `stock` binary with configs that differ from the shipped ones only in ports and
// paths (free ports, a TempDir). One node with dumps and metrics, then the two-node version.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "process.hpp"
#include "prometheus_process.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using elfin::test::ExitStatus;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

constexpr auto kTimeout = 30s;

std::string shipped(const std::string& name) { return (elfin::test::source_dir() / "examples/stock" / name).string(); }

/// Runs `stock run <topology> --config <dir>/<name>.config.toml` with the config `config(port)`
/// gives for a free port, until `ready` appears; again with another port if that one was taken.
Process start(const TempDir& dir, const std::string& name, const std::function<std::string(std::uint16_t)>& config,
              const std::string& ready, std::uint16_t& port) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port = elfin::test::free_tcp_port();
    auto config_path = dir.write(name + ".config.toml", config(port));
    auto node = Process::start({STOCK_BINARY, "run", shipped(name + ".toml"), "--config", config_path},
                               {.log_dir = dir.path(), .name = name + std::to_string(attempt)});
    if (!node) FAIL(node.error());
    if (node->wait_for_output(ready, kTimeout)) return std::move(*node);
    if (!elfin::test::address_in_use(node->output())) {
      FAIL(fmt::format("{} did not print `{}`; it printed:\n{}", name, ready, node->output()));
    }
  }
  FAIL("no free port after 5 attempts");
  throw;  // not reached
}

}  // namespace

TEST_CASE("the tutorial's stock node reserves items, dumps the requests and serves their metrics",
          "[integration][stock]") {
  TempDir dir;
  auto dump = dir.file("stock.dump");
  std::uint16_t port = 0;
  auto node = start(
      dir, "stock",
      [&](std::uint16_t p) {
        return fmt::format(R"([items]
initial = 3

[shoppers]
period = "50ms"
skus = ["apple", "pear"]
restock = 5

[system.dumpers]
path = "{}"
write_interval = "50ms"

[system.telemeters]
listen = "127.0.0.1:{}"
)",
                           dump, p);
      },
      "reserved 1 pear, 2 left", port);
  // The shoppers empty the shelves, restock, and go on.
  CHECK(node.wait_for_output("pear is out of stock, restocking 5", kTimeout));
  CHECK(node.wait_for_output("reserved 1 pear, 4 left", kTimeout));

  auto metrics = elfin::integration::http_get(port, "/metrics");
  REQUIRE(metrics);
  CHECK_THAT(*metrics, Catch::Contains(R"(elfin_requests_total{actor_group="shoppers")"));
  CHECK_THAT(*metrics, Catch::Contains(R"(message="Reserve")"));

  REQUIRE(node.signal(SIGTERM));
  CHECK(node.wait_exit(kTimeout) == ExitStatus::exited(0));

  auto read = Process::start({STOCK_BINARY, "dump", "--json", "--message", "stock.Reserve", "--group", "items", dump});
  REQUIRE(read);
  REQUIRE(read->wait_exit(kTimeout) == ExitStatus::exited(0));
  auto lines = read->stdout_text();
  CHECK_THAT(lines, Catch::Contains(R"("g":"items","k":"pear")"));
  CHECK_THAT(lines, Catch::Contains(R"("mk":"Request","m":{"sku":"pear","quantity":1})"));
  CHECK_THAT(lines, Catch::Contains(R"("mk":"Response","m":{"Err":{"available":0}})"));
}

TEST_CASE("the tutorial's two nodes: the shop's shoppers reserve the warehouse's items, across its restart",
          "[integration][stock]") {
  TempDir dir;
  std::uint16_t warehouse_port = 0;
  auto warehouse = start(
      dir, "warehouse",
      [](std::uint16_t p) {
        return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
secret = "tutorial"

[items]
initial = 3
)",
                           p);
      },
      "listening on tcp://127.0.0.1:", warehouse_port);
  std::uint16_t shop_port = 0;
  auto shop = start(
      dir, "shop",
      [&](std::uint16_t p) {
        return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
discovery.predefined = ["tcp://127.0.0.1:{}"]
discovery.attempt_interval = "200ms"
secret = "tutorial"

[shoppers]
period = "50ms"
skus = ["apple"]
restock = 5
)",
                           p, warehouse_port);
      },
      "reserved 1 apple, 2 left", shop_port);
  CHECK(shop.wait_for_output("apple is out of stock, restocking 5", kTimeout));
  CHECK(shop.wait_for_output("reserved 1 apple, 4 left", kTimeout));  // the restock reached node 2

  // The warehouse stops: the shoppers' requests fail, and they go on.
  REQUIRE(warehouse.signal(SIGTERM));
  CHECK(warehouse.wait_exit(kTimeout) == ExitStatus::exited(0));
  auto stopped = shop.mark();
  CHECK(shop.wait_for_output("reserving apple failed: ", kTimeout, stopped));
  // It starts again on the same address: reservations resume, from `initial` (memory only).
  auto restarted = shop.mark();
  auto again =
      Process::start({STOCK_BINARY, "run", shipped("warehouse.toml"), "--config", dir.file("warehouse.config.toml")},
                     {.log_dir = dir.path(), .name = "warehouse-again"});
  REQUIRE(again);
  CHECK(shop.wait_for_output("reserved 1 apple, 2 left", kTimeout, restarted));

  REQUIRE(again->signal(SIGTERM));
  CHECK(again->wait_exit(kTimeout) == ExitStatus::exited(0));
  REQUIRE(shop.signal(SIGTERM));
  CHECK(shop.wait_exit(kTimeout) == ExitStatus::exited(0));
}
