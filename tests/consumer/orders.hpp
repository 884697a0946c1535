// The shop's orders: an actor per item behind a MapRouter, each taking orders up to the
// configured size.
//
//   [orders]
//   max_count = 10   # larger orders are refused
#pragma once

#include <cstdint>
#include <string>

#include <elfin/elfin.hpp>

namespace shop {

struct Refused {
  std::string reason;
  ELFIN_PART(reason);
};

/// Orders `count` of `item`; the answer is the item's order number, or why it was refused.
struct PlaceOrder {
  std::string item;
  std::uint32_t count = 0;
  ELFIN_REQUEST(shop, PlaceOrder, (elfin::Result<std::uint64_t, Refused>), item, count);
};

struct OrdersConfig {
  std::uint32_t max_count = 10;
  ELFIN_CONFIG(max_count);
};

[[nodiscard]] elfin::Blueprint orders();

}  // namespace shop
