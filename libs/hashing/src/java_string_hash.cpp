#include <elfin/hashing/java_string_hash.hpp>

namespace elfin::hashing {

namespace {

// Accumulated unsigned: the wrap-around Java defines is then ordinary modular arithmetic (signed
// overflow would be undefined in C++), and the final conversion to int32 is two's complement.
struct JavaHash {
  std::uint32_t h = 0;
  void add(std::uint32_t code_unit) noexcept { h = 31 * h + code_unit; }
  [[nodiscard]] std::int32_t value() const noexcept { return static_cast<std::int32_t>(h); }
};

std::uint8_t byte_at(std::string_view s, std::size_t i) noexcept { return static_cast<std::uint8_t>(s[i]); }

}  // namespace

std::int32_t java_string_hash(std::u16string_view utf16) noexcept {
  JavaHash hash;
  for (char16_t unit : utf16) hash.add(unit);
  return hash.value();
}

Result<std::int32_t, Utf8Error> java_string_hash_utf8(std::string_view utf8) noexcept {
  JavaHash hash;
  std::size_t i = 0;
  while (i < utf8.size()) {
    const std::uint8_t lead = byte_at(utf8, i);
    if (lead < 0x80) {
      hash.add(lead);
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t cp = 0;
    std::uint32_t min_cp = 0;  // the smallest code point that needs this many bytes
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2, cp = lead & 0x1Fu, min_cp = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3, cp = lead & 0x0Fu, min_cp = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4, cp = lead & 0x07u, min_cp = 0x10000;
    } else if (lead == 0xC0 || lead == 0xC1) {
      return Err{Utf8Error{Utf8ErrorKind::Overlong, i}};
    } else {
      return Err{Utf8Error{Utf8ErrorKind::InvalidLeadByte, i}};
    }
    if (utf8.size() - i < length) return Err{Utf8Error{Utf8ErrorKind::Truncated, i}};
    for (std::size_t k = 1; k < length; ++k) {
      const std::uint8_t next = byte_at(utf8, i + k);
      if ((next & 0xC0u) != 0x80u) return Err{Utf8Error{Utf8ErrorKind::InvalidContinuation, i}};
      cp = (cp << 6) | (next & 0x3Fu);
    }
    if (cp < min_cp) return Err{Utf8Error{Utf8ErrorKind::Overlong, i}};
    if (cp >= 0xD800 && cp <= 0xDFFF) return Err{Utf8Error{Utf8ErrorKind::Surrogate, i}};
    if (cp > 0x10FFFF) return Err{Utf8Error{Utf8ErrorKind::OutOfRange, i}};
    if (cp < 0x10000) {
      hash.add(cp);
    } else {
      // Outside the BMP a Java char sequence holds the UTF-16 surrogate pair.
      const std::uint32_t v = cp - 0x10000;
      hash.add(0xD800 + (v >> 10));
      hash.add(0xDC00 + (v & 0x3FFu));
    }
    i += length;
  }
  return hash.value();
}

std::string_view to_string(Utf8ErrorKind kind) noexcept {
  switch (kind) {
    case Utf8ErrorKind::InvalidLeadByte:
      return "a byte that cannot start a character";
    case Utf8ErrorKind::Truncated:
      return "the text ends inside a character";
    case Utf8ErrorKind::InvalidContinuation:
      return "a character's continuation byte is missing";
    case Utf8ErrorKind::Overlong:
      return "an overlong encoding";
    case Utf8ErrorKind::Surrogate:
      return "a UTF-16 surrogate encoded as a character";
    case Utf8ErrorKind::OutOfRange:
      return "a code point above U+10FFFF";
  }
  return "unknown UTF-8 error";
}

}  // namespace elfin::hashing
