// Java's String.hashCode over UTF-16 code units, and the UTF-8 decoding in front of it. Known
// answers were computed from the definition (h = 31·h + unit, int32 wrap-around) over the
// strings' UTF-16LE encoding, in Python.
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include <elfin/hashing/java_string_hash.hpp>

using elfin::hashing::java_string_hash;
using elfin::hashing::java_string_hash_utf8;
using elfin::hashing::Utf8Error;
using elfin::hashing::Utf8ErrorKind;

namespace {

std::int32_t hash_utf8(std::string_view text) {
  auto hash = java_string_hash_utf8(text);
  REQUIRE(hash.ok());
  return *hash;
}

}  // namespace

TEST_CASE("java_string_hash equals Java's String.hashCode for ASCII", "[hashing]") {
  CHECK(java_string_hash(u"hello") == 99162322);
  CHECK(java_string_hash(u"") == 0);
  CHECK(java_string_hash(u"a") == 97);
  // Two strings Java is known to hash alike.
  CHECK(java_string_hash(u"Aa") == 2112);
  CHECK(java_string_hash(u"BB") == 2112);
  CHECK(java_string_hash(u"user:42") == -147170163);
  CHECK(hash_utf8("hello") == 99162322);
  CHECK(hash_utf8("") == 0);
  CHECK(hash_utf8("user:42") == -147170163);
}

TEST_CASE("java_string_hash wraps around in 32 bits: \"polygenelubricants\" hashes to INT32_MIN", "[hashing]") {
  CHECK(java_string_hash(u"polygenelubricants") == std::numeric_limits<std::int32_t>::min());
  CHECK(hash_utf8("polygenelubricants") == std::numeric_limits<std::int32_t>::min());
}

TEST_CASE("java_string_hash_utf8 decodes UTF-8 to UTF-16 code units before hashing", "[hashing]") {
  SECTION("two- and three-byte characters are one code unit each") {
    CHECK(hash_utf8("h\xC3\xA9llo") == 103094734);                         // héllo
    CHECK(hash_utf8("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E") == 25921943);  // 日本語
    CHECK(hash_utf8("h\xC3\xA9llo") == java_string_hash(u"h\u00E9llo"));
  }
  SECTION("a character outside the BMP is its two surrogates") {
    CHECK(hash_utf8("\xF0\x9F\x98\x80") == 1772899);  // U+1F600 = D83D DE00
    CHECK(hash_utf8("\xF0\x9F\x98\x80") == java_string_hash(u"\xD83D\xDE00"));
    CHECK(hash_utf8("a\xF0\x9F\x98\x80"
                    "b") == 57849694);
    CHECK(hash_utf8("\xF4\x8F\xBF\xBF") == java_string_hash(u"\xDBFF\xDFFF"));  // U+10FFFF
  }
}

TEST_CASE("java_string_hash_utf8 refuses bytes that are not UTF-8, naming the offset", "[hashing]") {
  auto error_of = [](std::string_view text) {
    auto hash = java_string_hash_utf8(text);
    REQUIRE_FALSE(hash.ok());
    return hash.error();
  };
  CHECK(error_of("ab\x80") == Utf8Error{Utf8ErrorKind::InvalidLeadByte, 2});
  CHECK(error_of("\xFF") == Utf8Error{Utf8ErrorKind::InvalidLeadByte, 0});
  CHECK(error_of("a\xC3") == Utf8Error{Utf8ErrorKind::Truncated, 1});
  CHECK(error_of("\xF0\x9F\x98") == Utf8Error{Utf8ErrorKind::Truncated, 0});
  CHECK(error_of("\xC3(") == Utf8Error{Utf8ErrorKind::InvalidContinuation, 0});
  CHECK(error_of("\xC0\xAF") == Utf8Error{Utf8ErrorKind::Overlong, 0});
  CHECK(error_of("\xE0\x80\xAF") == Utf8Error{Utf8ErrorKind::Overlong, 0});
  CHECK(error_of("\xF0\x80\x80\xAF") == Utf8Error{Utf8ErrorKind::Overlong, 0});
  CHECK(error_of("x\xED\xA0\xBD") == Utf8Error{Utf8ErrorKind::Surrogate, 1});  // CESU-8 D83D
  CHECK(error_of("\xF4\x90\x80\x80") == Utf8Error{Utf8ErrorKind::OutOfRange, 0});
  CHECK(fmt::format("{}", error_of("ab\x80")) == "not UTF-8 at byte 2: a byte that cannot start a character");
}

TEST_CASE("java_string_hash_utf8 agrees with java_string_hash on random text from every plane", "[hashing]") {
  // Code points drawn at random (surrogates excluded), encoded to UTF-8 and to UTF-16 here, by
  // the definitions, independently of the library's decoder.
  std::mt19937 random(16);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x10FFFF - 0x800);
  std::uniform_int_distribution<int> length(0, 12);
  for (int i = 0; i < 20000; ++i) {
    std::string utf8;
    std::u16string utf16;
    const int n = length(random);
    for (int k = 0; k < n; ++k) {
      std::uint32_t cp = any(random);
      if (cp >= 0xD800) cp += 0x800;  // skip U+D800-U+DFFF
      if (cp < 0x80) {
        utf8 += static_cast<char>(cp);
      } else if (cp < 0x800) {
        utf8 += static_cast<char>(0xC0 | (cp >> 6));
        utf8 += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        utf8 += static_cast<char>(0xE0 | (cp >> 12));
        utf8 += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        utf8 += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        utf8 += static_cast<char>(0xF0 | (cp >> 18));
        utf8 += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        utf8 += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        utf8 += static_cast<char>(0x80 | (cp & 0x3F));
      }
      if (cp < 0x10000) {
        utf16 += static_cast<char16_t>(cp);
      } else {
        utf16 += static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10));
        utf16 += static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF));
      }
    }
    auto hash = java_string_hash_utf8(utf8);
    REQUIRE(hash.ok());
    REQUIRE(*hash == java_string_hash(utf16));
  }
}

TEST_CASE("java_string_hash_utf8 reads random bytes without reading past them", "[hashing]") {
  // Mostly invalid input: either a hash or an error inside the string, never a read beyond it
  // (the sanitizer builds run this too).
  std::mt19937 random(8);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 8);
  for (int i = 0; i < 50000; ++i) {
    std::string bytes;
    const int n = length(random);
    for (int k = 0; k < n; ++k) bytes += static_cast<char>(byte(random));
    auto hash = java_string_hash_utf8(bytes);
    if (!hash.ok()) REQUIRE(hash.error().offset < bytes.size());
  }
}
