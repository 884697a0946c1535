// Java's String.hashCode, for routing compatible with Shardcake (JVM) pods: h = 31·h + c over the
// string's UTF-16 code units, wrapping around in 32-bit two's complement. A character outside the
// Basic Multilingual Plane counts as its two surrogates, so an id given as UTF-8 is decoded to
// UTF-16 first. Invalid UTF-8 is an error rather than a guess: no Java string has those bytes, and
// replacing them (as a JVM decoder would) risks disagreeing with the JVM on where and how often.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include <elfin/result.hpp>

namespace elfin::hashing {

/// Why a byte string is not UTF-8 (RFC 3629).
enum class Utf8ErrorKind : std::uint8_t {
  InvalidLeadByte,      ///< a byte that cannot start a character (0x80-0xBF, 0xC0, 0xC1, 0xF5-0xFF)
  Truncated,            ///< the string ends inside a character
  InvalidContinuation,  ///< a character's following byte is not 10xxxxxx
  Overlong,             ///< a character encoded in more bytes than it needs
  Surrogate,            ///< U+D800-U+DFFF encoded directly (CESU-8), which UTF-8 forbids
  OutOfRange,           ///< above U+10FFFF
};

/// Not UTF-8, at `offset` (the first byte of the offending character).
struct Utf8Error {
  Utf8ErrorKind kind = Utf8ErrorKind::InvalidLeadByte;
  std::size_t offset = 0;

  friend bool operator==(const Utf8Error&, const Utf8Error&) = default;
};

/// Java's `String.hashCode` of a string given as UTF-16 code units.
[[nodiscard]] std::int32_t java_string_hash(std::u16string_view utf16) noexcept;

/// Java's `String.hashCode` of the string whose UTF-8 encoding is `utf8`; decodes on the fly
/// (no allocation).
[[nodiscard]] Result<std::int32_t, Utf8Error> java_string_hash_utf8(std::string_view utf8) noexcept;

[[nodiscard]] std::string_view to_string(Utf8ErrorKind kind) noexcept;

}  // namespace elfin::hashing

template <>
struct fmt::formatter<elfin::hashing::Utf8ErrorKind> : fmt::formatter<std::string_view> {
  auto format(elfin::hashing::Utf8ErrorKind kind, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::hashing::to_string(kind), ctx);
  }
};

template <>
struct fmt::formatter<elfin::hashing::Utf8Error> : fmt::formatter<std::string_view> {
  auto format(const elfin::hashing::Utf8Error& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "not UTF-8 at byte {}: {}", e.offset, e.kind);
  }
};
