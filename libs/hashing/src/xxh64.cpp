#include <elfin/hashing/xxh64.hpp>

#include <xxhash.h>

namespace elfin::hashing {

std::uint64_t xxh64(std::span<const std::byte> bytes, std::uint64_t seed) noexcept {
  return XXH64(bytes.data(), bytes.size(), seed);
}

std::uint64_t xxh64(std::string_view text, std::uint64_t seed) noexcept {
  return XXH64(text.data(), text.size(), seed);
}

}  // namespace elfin::hashing
