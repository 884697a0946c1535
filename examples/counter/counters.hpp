// The two counter groups of the example: the same behaviour written as a functional actor
// (state in the coroutine frame) and as a structural actor (state in a class).
#pragma once

#include <elfin/blueprint.hpp>

namespace counter {

/// A counter written as one coroutine function (functional_counter.cpp).
[[nodiscard]] elfin::Blueprint functional();
/// A counter written as a class with a `main()` coroutine (structural_counter.cpp).
[[nodiscard]] elfin::Blueprint structural();

}  // namespace counter
