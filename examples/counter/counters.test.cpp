// Functional tests of the two counter groups with the test proxy: the proxy plays the client
// that the `samples` actor plays in main.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "counters.hpp"
#include "protocol.hpp"

// NOLINTBEGIN(bugprone-chained-comparison): Catch2's CHECK(a == b) expands to a chained comparison

using counter::GetValue;
using counter::Increment;

namespace {

void check_counting(elfin::Blueprint counters) {
  auto proxy = elfin::testing::proxy(std::move(counters));

  SECTION("a new counter is at zero") { CHECK(proxy.request(GetValue{}) == 0); }

  SECTION("every Increment adds its delta") {
    proxy.send(Increment{});  // delta defaults to 1
    proxy.send(Increment{3});
    CHECK(proxy.request(GetValue{}) == 4);
  }

  SECTION("a counter sends nothing on its own") {
    proxy.send(Increment{2});
    proxy.sync();  // returns once the counter has handled everything sent so far
    CHECK_FALSE(proxy.try_recv());
  }
}

}  // namespace

TEST_CASE("the functional counter counts", "[examples][counter]") { check_counting(counter::functional()); }

TEST_CASE("the structural counter counts", "[examples][counter]") { check_counting(counter::structural()); }
// NOLINTEND(bugprone-chained-comparison)
