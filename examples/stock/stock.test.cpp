// The stock groups' functional tests, each group on its own with the test proxy (the guide's
// tutorial, step 4). The groups across processes and nodes: tests/integration/stock.test.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <chrono>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "protocol.hpp"
#include "stock.hpp"

// NOLINTBEGIN(bugprone-chained-comparison): Catch2's CHECK(a == b) expands to a chained comparison

using namespace std::chrono_literals;
using elfin::Err;

// ANCHOR: items_test
TEST_CASE("an item gives out what it holds, then says how many are left", "[examples][stock]") {
  auto proxy = elfin::testing::proxy(stock::items(), "initial = 2");

  CHECK(proxy.request(stock::Reserve{"apple", 1}) == 1u);
  CHECK(proxy.request(stock::Reserve{"apple", 2}) == Err{stock::OutOfStock{1}});
  proxy.send(stock::Restock{"apple", 5});
  CHECK(proxy.request(stock::Level{"apple"}) == 6u);
  CHECK(proxy.request(stock::Level{"pear"}) == 2u);  // another key, another actor
}
// ANCHOR_END: items_test

// ANCHOR: shoppers_test
TEST_CASE("a shopper reserves one of each SKU in turn and restocks what is out", "[examples][stock]") {
  auto proxy = elfin::testing::proxy(stock::shoppers(), R"(period = "100ms"
skus = ["apple", "pear"]
restock = 4)",
                                     {.virtual_time = true});

  proxy.advance(100ms);
  auto first = proxy.recv();
  REQUIRE(first.get<stock::Reserve>() != nullptr);
  CHECK(first.get<stock::Reserve>()->sku == "apple");
  first.take_token<stock::Reserve>().respond(2u);

  proxy.advance(100ms);
  auto second = proxy.recv();
  REQUIRE(second.get<stock::Reserve>() != nullptr);
  CHECK(second.get<stock::Reserve>()->sku == "pear");
  second.take_token<stock::Reserve>().respond(Err{stock::OutOfStock{0}});

  auto restock = proxy.recv();
  REQUIRE(restock.get<stock::Restock>() != nullptr);
  CHECK(restock.get<stock::Restock>()->sku == "pear");
  CHECK(restock.get<stock::Restock>()->quantity == 4);
}
// ANCHOR_END: shoppers_test
// NOLINTEND(bugprone-chained-comparison)
