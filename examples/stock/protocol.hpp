// The stock service's protocol: what shops send to the items they sell. Messages only, no logic:
// the groups include this header, never each other.
#pragma once

#include <cstdint>
#include <string>

#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace stock {

// ANCHOR: protocol
/// Adds units of an item (e.g. a delivery arrived). No answer.
struct Restock {
  std::string sku;
  std::uint32_t quantity = 0;
  ELFIN_MESSAGE(stock, Restock, sku, quantity);
};

/// Why a reservation was turned down: a domain answer the shop acts on, not a failure.
struct OutOfStock {
  std::uint32_t available = 0;
  ELFIN_PART(available);
  friend bool operator==(const OutOfStock&, const OutOfStock&) = default;
};

/// Takes units of an item; answered with the units left, or OutOfStock.
struct Reserve {
  std::string sku;
  std::uint32_t quantity = 0;
  ELFIN_REQUEST(stock, Reserve, (elfin::Result<std::uint32_t, OutOfStock>), sku, quantity);
};

/// How many units of an item are left.
struct Level {
  std::string sku;
  ELFIN_REQUEST(stock, Level, std::uint32_t, sku);
};
// ANCHOR_END: protocol

}  // namespace stock
