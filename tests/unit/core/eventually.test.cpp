// The polling helper the tests wait with: it looks at its condition no more often than asked.
#include <catch2/catch.hpp>

#include <chrono>

#include "../eventually.hpp"

using namespace std::chrono_literals;
using elfin::test::eventually;

TEST_CASE("eventually looks at a condition that never holds once per interval, plus a last look", "[eventually]") {
  int looks = 0;
  CHECK_FALSE(eventually([&] { return ++looks, false; }, 200ms, 20ms));
  // Each pause lasts at least the interval: at most 200 / 20 looks in the loop and the last one.
  CHECK(looks >= 2);
  CHECK(looks <= 11);
}

TEST_CASE("eventually returns as soon as the condition holds", "[eventually]") {
  int looks = 0;
  CHECK(eventually([&] { return ++looks == 3; }, 10s, 1ms));
  CHECK(looks == 3);
}
