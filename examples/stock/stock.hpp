// The stock service's groups, each a function returning a Blueprint (the protocol: protocol.hpp).
//
// "stock.items": one actor per item, keyed by its SKU (a MapRouter). Answers Reserve with the
//   units left or OutOfStock, Level with the units left; adds Restock. A new item starts with
//   `initial` units.
//
//     [items]
//     initial = 10   # units a new item starts with
//
// "stock.shoppers": every `period`, reserves one unit of the next SKU of `skus` and logs the
//   answer ("reserved 1 apple, 9 left"); restocks `restock` units of an item found out of stock.
//
//     [shoppers]
//     period = "200ms"
//     skus = ["apple", "pear"]
//     restock = 5
#pragma once

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>

namespace stock {

[[nodiscard]] elfin::Blueprint items();
[[nodiscard]] elfin::Blueprint shoppers();

/// Registers "stock.items" and "stock.shoppers", for topology files.
void register_blueprints(elfin::BlueprintRegistry& registry);

}  // namespace stock
