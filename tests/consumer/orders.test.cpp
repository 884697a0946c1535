#include <catch2/catch.hpp>

#include <elfin/testing/proxy.hpp>

#include "orders.hpp"

TEST_CASE("orders are numbered per item, and orders over max_count are refused") {
  auto proxy = elfin::testing::proxy(shop::orders(), "max_count = 3");
  CHECK(proxy.request(shop::PlaceOrder{"tea", 2}).value() == 1);
  CHECK(proxy.request(shop::PlaceOrder{"tea", 1}).value() == 2);
  CHECK(proxy.request(shop::PlaceOrder{"cake", 1}).value() == 1);
  auto refused = proxy.request(shop::PlaceOrder{"tea", 4});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().reason == "4 is over 3");
}
