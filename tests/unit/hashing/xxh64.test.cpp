// XXH64 against known answers. The values were computed with an implementation written from the
// xxHash specification (doc/xxhash_spec.md: the four-lane stripes of 32 bytes, the 8/4/1-byte
// tail, the avalanche), independent of libxxhash; the empty input's value is the one the
// specification's readers quote.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include <elfin/hashing/xxh64.hpp>

using elfin::hashing::xxh64;

namespace {

std::string bytes_up_to(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
  return s;
}

}  // namespace

TEST_CASE("xxh64 with seed 0 gives the known answers, short inputs and whole stripes alike", "[hashing]") {
  CHECK(xxh64("") == 0xEF46DB3751D8E999ULL);
  CHECK(xxh64("a") == 0xD24EC4F1A98C6E5BULL);
  CHECK(xxh64("abc") == 0x44BC2CF5AD770999ULL);
  CHECK(xxh64("user:42") == 0xDC1FEA7DA8D2D1C2ULL);
  CHECK(xxh64("The quick brown fox jumps over the lazy dog") == 0x0B242D361FDA71BCULL);
  CHECK(xxh64(bytes_up_to(32)) == 0xCBF59C5116FF32B4ULL);   // one stripe exactly
  CHECK(xxh64(bytes_up_to(100)) == 0x6AC1E58032166597ULL);  // three stripes, then 8 + 4 byte tails
}

TEST_CASE("xxh64 takes the seed into account", "[hashing]") {
  CHECK(xxh64("", 1) == 0xD5AFBA1336A3BE4BULL);
  CHECK(xxh64("abc", 1) == 0xBEA9CA8199328908ULL);
  CHECK(xxh64(bytes_up_to(100), 1) == 0x3D19A3A2098A7023ULL);
}

TEST_CASE("xxh64 of text is xxh64 of its bytes, without a terminator", "[hashing]") {
  const std::array<std::byte, 3> abc{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
  CHECK(xxh64(std::span<const std::byte>(abc)) == xxh64("abc"));
  CHECK(xxh64(std::string_view("abc\0", 4)) != xxh64("abc"));
}
