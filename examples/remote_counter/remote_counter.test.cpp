// Functional tests of the remote-counter groups in one process: each group with the test proxy,
// then both in a local topology (clients → counters) under virtual time, where the client's
// interval fires as the test moves the clock. The same groups across processes, over the
// network battery: tests/integration/remote_counter.test.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include <elfin/elfin.hpp>
#include <elfin/logger/logger.hpp>
#include <elfin/testing/proxy.hpp>

#include "protocol.hpp"
#include "remote_counter.hpp"
#include "temp_dir.hpp"

// NOLINTBEGIN(bugprone-chained-comparison): Catch2's CHECK(a == b) expands to a chained comparison

using namespace std::chrono_literals;
using remote_counter::Add;
using remote_counter::Get;
using remote_counter::Increment;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace

TEST_CASE("the server keeps one counter per name", "[examples][remote_counter]") {
  auto proxy = elfin::testing::proxy(remote_counter::server());

  SECTION("a counter never added to is at zero") { CHECK(proxy.request(Get{"hits"}) == 0); }

  SECTION("Add answers with the new value, per name") {
    CHECK(proxy.request(Add{"hits", 2}) == 2);
    CHECK(proxy.request(Add{"hits", 3}) == 5);
    CHECK(proxy.request(Add{"misses", 1}) == 1);
    CHECK(proxy.request(Get{"hits"}) == 5);
  }

  SECTION("Increment adds without an answer") {
    proxy.send(Increment{"hits", 10});
    proxy.send(Increment{"hits", 1});
    CHECK(proxy.request(Get{"hits"}) == 11);
    CHECK(proxy.request(Get{"misses"}) == 0);
    proxy.sync();
    CHECK_FALSE(proxy.try_recv());
  }
}

TEST_CASE("the client sends Add{name, 1} at its rate and goes on after a failed request",
          "[examples][remote_counter]") {
  auto proxy = elfin::testing::proxy(remote_counter::client(), "rate = 10\nname = \"visits\"", {.virtual_time = true});

  proxy.sync();
  CHECK_FALSE(proxy.try_recv());  // nothing before the first tick

  proxy.advance(100ms);
  auto first = proxy.recv();
  REQUIRE(first.get<Add>() != nullptr);
  CHECK(first.get<Add>()->name == "visits");
  CHECK(first.get<Add>()->by == 1);
  first.take_token<Add>().respond(7);

  proxy.advance(100ms);
  auto second = proxy.recv();
  REQUIRE(second.get<Add>() != nullptr);
  {
    auto dropped = second.take_token<Add>();  // dropped unanswered: the client sees Ignored
  }

  // Still ticking after the failure, at the same rate: one request per 100 ms.
  proxy.advance(100ms);
  auto third = proxy.recv();
  REQUIRE(third.get<Add>() != nullptr);
  third.take_token<Add>().respond(8);
  proxy.sync();
  CHECK_FALSE(proxy.try_recv());
}

TEST_CASE("a client and the counters in one node count every tick and log each answer", "[examples][remote_counter]") {
  elfin::test::TempDir dir;
  const auto log_path = dir.file("node.log");

  elfin::Topology topology;
  auto loggers = topology.local("system.loggers");
  auto clients = topology.local("clients");
  auto counters = topology.local("counters");
  clients.route_to(counters, elfin::filters::protocol("counter"));
  loggers.mount(elfin::logger::blueprint());
  clients.mount(remote_counter::client()).entrypoint();
  counters.mount(remote_counter::server());

  elfin::StartOptions start;
  start.virtual_time = true;
  start.config_toml = "[system.loggers]\nsink = \"file\"\npath = \"" + log_path + "\"\n[clients]\nrate = 20\n";
  auto proxy = elfin::testing::proxy(std::move(topology), "counters", std::move(start));

  proxy.advance(1s);  // 20 ticks, each answered before the next
  CHECK(proxy.request(Get{"hits"}) == 20);

  const auto log = read_file(log_path);
  INFO(log);
  CHECK(count_of(log, "clients/_ - counter hits = ") == 20);
  CHECK(log.find("clients/_ - counter hits = 1\n") != std::string::npos);
  CHECK(log.find("clients/_ - counter hits = 20\n") != std::string::npos);
  CHECK(log.find("counters/hits - hits = 20 (+1)") != std::string::npos);
  CHECK(log.find("request failed") == std::string::npos);
}
// NOLINTEND(bugprone-chained-comparison)
