// Forward declarations of elfin::hashing's types, for headers that only name them.
#pragma once

#include <cstdint>

namespace elfin::hashing {

using ShardId = std::uint32_t;
enum class ShardAlgorithm : std::uint8_t;
class [[nodiscard]] ShardFunction;
struct ShardFunctionError;
struct ShardFunctionMismatch;
struct Utf8Error;

}  // namespace elfin::hashing
