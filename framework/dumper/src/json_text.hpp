// Writing dump-file JSON: the pieces both line writers share — a DumpRecord's (`elfin dump --json`,
// dump_record.cpp) and a recorded dump's (the file writer, dump_format.cpp) — so the line's field
// order and the escaping rules exist once.
//
// A line is written in many small pieces (a quote, a field name, a few digits), so they go through
// TextOut, a buffer on the stack that reaches the string in one append per line or so: a string
// append per piece cost more than the rest of the formatting. Nothing here parses a format string
// at run time or allocates beyond the growth of the caller's string.
//
// Thread safety: pure functions; a TextOut belongs to the thread that made it. Private to the
// dumper library.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <elfin/dumper/dump_record.hpp>

namespace elfin::dumper::detail {

/// Appends to `out` through a buffer of its own; everything is in `out` once it is destroyed.
class TextOut {
 public:
  /// The most `room_for` may be asked for.
  static constexpr std::size_t kMaxRoom = 64;

  explicit TextOut(std::string& out) : out_(out) {}
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;
  ~TextOut() { flush(); }

  void put(char c) {
    if (p_ == buf_ + kSize) flush();
    *p_++ = c;
  }
  /// A string literal: its size is known, so the copy is a few moves.
  template <std::size_t N>
  void literal(const char (&text)[N]) {
    if (room() < N - 1) flush();
    std::memcpy(p_, text, N - 1);
    p_ += N - 1;
  }
  void write(std::string_view text) {
    if (text.size() > room()) {
      flush();
      if (text.size() > kSize) {
        out_.append(text);
        return;
      }
    }
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  /// The next `n` (at most kMaxRoom) bytes to write into directly; `advance` past what was written.
  [[nodiscard]] char* room_for(std::size_t n) {
    if (room() < n) flush();
    return p_;
  }
  void advance(char* end) { p_ = end; }

  /// Bytes written so far, counting those of `out` before this TextOut.
  [[nodiscard]] std::size_t size() const { return out_.size() + static_cast<std::size_t>(p_ - buf_); }
  /// What was written from position `from` on; valid until the next write.
  [[nodiscard]] std::string_view since(std::size_t from) {
    if (from < out_.size()) flush();  // it starts in `out`: all of it there
    if (from >= out_.size()) {
      return {buf_ + (from - out_.size()), static_cast<std::size_t>(p_ - buf_) - (from - out_.size())};
    }
    return std::string_view{out_}.substr(from);
  }
  /// Drops what was written from position `to` on.
  void truncate(std::size_t to) {
    if (to >= out_.size()) {
      p_ = buf_ + (to - out_.size());
    } else {
      out_.resize(to);
      p_ = buf_;
    }
  }

 private:
  static constexpr std::size_t kSize = 1024;  // a typical line fits: one append per line

  [[nodiscard]] std::size_t room() const { return static_cast<std::size_t>(buf_ + kSize - p_); }
  void flush() {
    out_.append(buf_, static_cast<std::size_t>(p_ - buf_));
    p_ = buf_;
  }

  std::string& out_;
  char buf_[kSize];
  char* p_ = buf_;
};

inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// How many decimal digits `value` has: from its bit width, then one comparison.
inline std::size_t count_digits(std::uint64_t value) {
  // Digits of the largest number of each bit width; one less below that width's power of ten.
  static constexpr std::uint8_t kByWidth[] = {1,  1,  1,  1,  2,  2,  2,  3,  3,  3,  4,  4,  4,  4,  5,  5,  5,
                                              6,  6,  6,  7,  7,  7,  7,  8,  8,  8,  9,  9,  9,  10, 10, 10, 10,
                                              11, 11, 11, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 15, 15, 15, 16,
                                              16, 16, 16, 17, 17, 17, 18, 18, 18, 19, 19, 19, 19, 20};
  static constexpr auto kPowers = [] {  // [d]: 10^(d-1), the smallest number of d digits (0 for 1)
    std::array<std::uint64_t, 21> powers{};
    std::uint64_t power = 1;
    for (std::size_t d = 2; d < powers.size(); ++d) powers[d] = power *= 10;
    return powers;
  }();
  const std::size_t digits = kByWidth[std::bit_width(value)];
  return digits - (value < kPowers[digits] ? 1 : 0);
}

/// Writes the two digits of `value` (below 100) at `p`.
inline void write_pair(char* p, std::uint32_t value) { std::memcpy(p, kDigitPairs + std::size_t{2} * value, 2); }

/// Writes the decimal digits of `value` at `p` (room for 20) and returns their end. From the end:
/// eight digits at a time while the number is large (32-bit arithmetic, four independent pairs:
/// a timestamp's 19 digits are not a chain of 10 dependent 64-bit divisions), then two at a time.
inline char* write_uint(char* p, std::uint64_t value) {
  char* const end = p + count_digits(value);
  char* q = end;
  while (value >= 100'000'000) {
    const auto low = static_cast<std::uint32_t>(value % 100'000'000);
    value /= 100'000'000;
    const std::uint32_t high4 = low / 10'000;
    const std::uint32_t low4 = low % 10'000;
    q -= 8;
    write_pair(q, high4 / 100);
    write_pair(q + 2, high4 % 100);
    write_pair(q + 4, low4 / 100);
    write_pair(q + 6, low4 % 100);
  }
  auto rest = static_cast<std::uint32_t>(value);
  while (rest >= 100) {
    q -= 2;
    write_pair(q, rest % 100);
    rest /= 100;
  }
  if (rest >= 10) {
    write_pair(q - 2, rest);
  } else {
    q[-1] = static_cast<char>('0' + rest);
  }
  return end;
}

inline void append_uint(std::uint64_t value, TextOut& out) { out.advance(write_uint(out.room_for(20), value)); }

inline void append_int(std::int64_t value, TextOut& out) {
  char* p = out.room_for(21);
  if (value < 0) {
    *p++ = '-';
    // -(value + 1) + 1: the magnitude, without overflowing on the smallest int64
    out.advance(write_uint(p, static_cast<std::uint64_t>(-(value + 1)) + 1));
  } else {
    out.advance(write_uint(p, static_cast<std::uint64_t>(value)));
  }
}

/// Writes `text` escaped for the inside of a JSON string (no quotes), bytes as they are: what
/// append_json_string writes between its quotes.
void append_json_chars(std::string_view text, TextOut& out);
/// Writes `text` as a JSON string literal.
void append_json_string(std::string_view text, TextOut& out);
/// Writes `text` as a JSON string literal with every byte that starts no valid UTF-8 sequence
/// replaced by U+FFFD, so a line stays valid JSON whatever a message's strings hold.
void append_utf8_json_string(std::string_view text, TextOut& out);

/// The fields of a line before the body, borrowed from a DumpRecord or a recorded dump.
struct LineHead {
  std::uint64_t ts = 0;
  std::string_view group;
  const std::string* key = nullptr;  ///< null: no "k"
  std::uint16_t node_no = 0;
  std::uint64_t sequence_no = 0;
  std::uint64_t trace_id = 0;
  std::uint64_t thread = 0;
  Direction direction = Direction::In;
  const std::string* class_name = nullptr;  ///< null: no "cl"
  std::string_view message_name;
  std::string_view protocol;
  MessageKind kind = MessageKind::Regular;
};

/// Writes `{"ts":…` up to and including `"m":`; the caller writes the body's JSON, then the tail.
/// (The file writer's append_dump_line writes the same fields itself, with cached texts.)
void append_line_head(const LineHead& head, TextOut& out);
/// The head's last fields: `"mk"` and the body's key `"m":`.
void append_kind_and_body_key(MessageKind kind, TextOut& out);
/// Writes the end of a line: `"c"` if there is a correlation id, `}` and the newline.
void append_line_tail(std::optional<std::uint64_t> correlation_id, TextOut& out);

}  // namespace elfin::dumper::detail
