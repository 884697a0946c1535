// CRC-32C from ISA-L checked against the definition, computed here bit by bit.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include <elfin/wal/crc32c.hpp>

#include "wal_test_support.hpp"

namespace {

// The definition: reflected polynomial 0x82F63B78, register preset to all ones, result inverted.
std::uint32_t reference_crc32c(std::span<const std::byte> data) {
  std::uint32_t reg = 0xFFFFFFFFu;
  for (std::byte b : data) {
    reg ^= static_cast<std::uint32_t>(b);
    for (int bit = 0; bit < 8; ++bit) reg = (reg & 1u) != 0 ? (reg >> 1) ^ 0x82F63B78u : reg >> 1;
  }
  return ~reg;
}

}  // namespace

using elfin::wal::crc32c;
using elfin::wal::test::bytes_of;

TEST_CASE("crc32c gives the standard check value for \"123456789\"", "[wal]") {
  const auto data = bytes_of("123456789");
  CHECK(reference_crc32c(data) == 0xE3069283u);
  CHECK(crc32c(data) == 0xE3069283u);
}

TEST_CASE("crc32c of the empty input is 0", "[wal]") { CHECK(crc32c({}) == 0u); }

TEST_CASE("crc32c from ISA-L equals the bitwise definition for every length and alignment", "[wal]") {
  std::mt19937 rng(19);
  std::vector<std::byte> buffer(4096 + 64);
  for (auto& b : buffer) b = static_cast<std::byte>(rng());
  // Lengths and start offsets around the sizes where fast paths switch (8, 16, 64, 256, ...).
  for (std::size_t offset : {0u, 1u, 3u, 7u, 8u, 13u}) {
    for (std::size_t length = 0; length <= 1100; length += (length < 300 ? 1 : 37)) {
      const auto data = std::span<const std::byte>(buffer).subspan(offset, length);
      INFO("offset " << offset << " length " << length);
      REQUIRE(crc32c(data) == reference_crc32c(data));
    }
  }
  const auto all = std::span<const std::byte>(buffer).first(4096);
  CHECK(crc32c(all) == reference_crc32c(all));
}

TEST_CASE("crc32c continued from a prior value equals the crc of the concatenation", "[wal]") {
  const auto whole = bytes_of("the quick brown fox jumps over the lazy dog");
  for (std::size_t cut = 0; cut <= whole.size(); ++cut) {
    const auto a = std::span<const std::byte>(whole).first(cut);
    const auto b = std::span<const std::byte>(whole).subspan(cut);
    REQUIRE(crc32c(b, crc32c(a)) == crc32c(whole));
  }
}
