#include <elfin/dumper/dump_record.hpp>

#include <array>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json_text.hpp"

namespace elfin::dumper {

std::string_view to_string(Direction direction) { return direction == Direction::In ? "In" : "Out"; }

std::string_view to_string(MessageKind kind) {
  switch (kind) {
    case MessageKind::Regular:
      return "Regular";
    case MessageKind::Request:
      return "Request";
    case MessageKind::Response:
      return "Response";
  }
  return "Regular";
}

namespace detail {

namespace {

// What a byte needs inside a JSON string: nothing, an escape, or (a byte of 0x80 and up) a UTF-8
// check when strings are sanitized.
enum ByteClass : std::uint8_t { kPlain, kEscape, kHigh };

constexpr std::array<std::uint8_t, 256> kByteClass = [] {
  std::array<std::uint8_t, 256> classes{};
  for (std::size_t c = 0; c < 256; ++c) {
    if (c < 0x20 || c == '"' || c == '\\') {
      classes[c] = kEscape;
    } else if (c >= 0x80) {
      classes[c] = kHigh;
    }
  }
  return classes;
}();

// Whether any of 8 bytes needs a closer look: a control character, '"', '\\', or (sanitizing) a
// byte of 0x80 and up. Exact as a yes/no (the classic "has a zero / a smaller byte" tricks), so a
// clean run of text is copied 8 bytes per step.
template <bool kSanitize>
bool needs_look(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHighs = 0x8080808080808080;
  const auto has_zero = [&](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  std::uint64_t look =
      ((word - kOnes * 0x20) & ~word & kHighs) | has_zero(word ^ (kOnes * '"')) | has_zero(word ^ (kOnes * '\\'));
  if constexpr (kSanitize) look |= word & kHighs;
  return look != 0;
}

void append_escape(unsigned char c, TextOut& out) {
  switch (c) {
    case '"':
      out.literal(R"(\")");
      break;
    case '\\':
      out.literal(R"(\\)");
      break;
    case '\n':
      out.literal(R"(\n)");
      break;
    case '\r':
      out.literal(R"(\r)");
      break;
    case '\t':
      out.literal(R"(\t)");
      break;
    default: {
      constexpr std::string_view kHex = "0123456789abcdef";
      const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.write({escape, sizeof escape});
    }
  }
}

// The length of the valid UTF-8 sequence starting at `p` (a byte of 0x80 and up), or 0 if there
// is none. As lenient as the dump format has always been: the lead byte and the count of
// continuation bytes are checked, overlong forms and surrogates are not.
std::size_t utf8_sequence(const char* p, const char* end) {
  const auto b0 = static_cast<unsigned char>(*p);
  std::size_t n = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(p[i]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Copies clean runs whole and stops only at a byte that needs an escape (or, sanitizing, at a
// byte of 0x80 and up, which stays in the run when it starts a valid sequence).
template <bool kSanitize>
void append_escaped(std::string_view text, TextOut& out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const char* run = p;  // the start of the bytes not written yet
  while (p != end) {
    if (end - p >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, sizeof word);
      if (!needs_look<kSanitize>(word)) {
        p += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(*p);
    const std::uint8_t cls = kByteClass[c];
    if (cls == kPlain || (!kSanitize && cls == kHigh)) {
      ++p;
      continue;
    }
    if (cls == kHigh) {
      if (const std::size_t n = utf8_sequence(p, end); n != 0) {
        p += n;
        continue;
      }
    }
    out.write({run, static_cast<std::size_t>(p - run)});
    if (cls == kHigh) {
      out.literal("\xEF\xBF\xBD");  // U+FFFD for a byte that starts no valid sequence
    } else {
      append_escape(c, out);
    }
    run = ++p;
  }
  out.write({run, static_cast<std::size_t>(p - run)});
}

}  // namespace

void append_json_chars(std::string_view text, TextOut& out) { append_escaped<false>(text, out); }

void append_json_string(std::string_view text, TextOut& out) {
  out.put('"');
  append_escaped<false>(text, out);
  out.put('"');
}

void append_utf8_json_string(std::string_view text, TextOut& out) {
  out.put('"');
  append_escaped<true>(text, out);
  out.put('"');
}

void append_line_head(const LineHead& h, TextOut& out) {
  out.literal(R"({"ts":)");
  append_uint(h.ts, out);
  out.literal(R"(,"g":)");
  append_json_string(h.group, out);
  if (h.key != nullptr) {
    out.literal(R"(,"k":)");
    append_json_string(*h.key, out);
  }
  out.literal(R"(,"n":)");
  append_uint(h.node_no, out);
  out.literal(R"(,"s":)");
  append_uint(h.sequence_no, out);
  out.literal(R"(,"t":)");
  append_uint(h.trace_id, out);
  out.literal(R"(,"th":)");
  append_uint(h.thread, out);
  if (h.direction == Direction::In) {
    out.literal(R"(,"d":"In")");
  } else {
    out.literal(R"(,"d":"Out")");
  }
  if (h.class_name != nullptr) {
    out.literal(R"(,"cl":)");
    append_json_string(*h.class_name, out);
  }
  out.literal(R"(,"mn":)");
  append_json_string(h.message_name, out);
  out.literal(R"(,"mp":)");
  append_json_string(h.protocol, out);
  append_kind_and_body_key(h.kind, out);
}

void append_kind_and_body_key(MessageKind kind, TextOut& out) {
  switch (kind) {
    case MessageKind::Regular:
      out.literal(R"(,"mk":"Regular","m":)");
      break;
    case MessageKind::Request:
      out.literal(R"(,"mk":"Request","m":)");
      break;
    case MessageKind::Response:
      out.literal(R"(,"mk":"Response","m":)");
      break;
  }
}

void append_line_tail(std::optional<std::uint64_t> correlation_id, TextOut& out) {
  if (correlation_id) {
    out.literal(R"(,"c":)");
    append_uint(*correlation_id, out);
  }
  out.literal("}\n");
}

}  // namespace detail

void append_json_string(std::string_view text, std::string& out) {
  detail::TextOut text_out(out);
  detail::append_json_string(text, text_out);
}

void append_json_line(const DumpRecord& r, std::string& out) {
  detail::TextOut text_out(out);
  detail::append_line_head(
      {
          .ts = r.ts,
          .group = r.group,
          .key = r.key ? &*r.key : nullptr,
          .node_no = r.node_no,
          .sequence_no = r.sequence_no,
          .trace_id = r.trace_id,
          .thread = r.thread,
          .direction = r.direction,
          .class_name = r.class_name ? &*r.class_name : nullptr,
          .message_name = r.message_name,
          .protocol = r.protocol,
          .kind = r.kind,
      },
      text_out);
  text_out.write(r.body_json.empty() ? std::string_view{"null"} : std::string_view{r.body_json});
  detail::append_line_tail(r.correlation_id, text_out);
}

namespace {

using Json = nlohmann::ordered_json;  // keeps the body's key order

// Reads the fields of one line, remembering the first problem (which field, what it should be).
class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}

  void text(const char* field, std::string& out) {
    if (const Json* v = find(field, true)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        fail(field, "a string");
      }
    }
  }
  void text(const char* field, std::optional<std::string>& out) {
    if (object_.contains(field)) text(field, out.emplace());
  }
  template <class U>
  void number(const char* field, U& out) {
    if (const Json* v = find(field, true)) {
      if (v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
        auto value = v->get<std::uint64_t>();
        if (value > std::numeric_limits<U>::max()) {
          fail(field, "a smaller number");
        } else {
          out = static_cast<U>(value);
        }
      } else {
        fail(field, "an unsigned integer");
      }
    }
  }
  template <class U>
  void number(const char* field, std::optional<U>& out) {
    if (object_.contains(field)) number(field, out.emplace());
  }
  void body(const char* field, std::string& out) {
    if (const Json* v = find(field, true)) out = v->dump();
  }

  [[nodiscard]] const std::string& error() const { return error_; }
  void fail(const char* field, std::string_view expected) {
    if (error_.empty()) error_ = fmt::format("field \"{}\" must be {}", field, expected);
  }

 private:
  const Json* find(const char* field, bool required) {
    auto it = object_.find(field);
    if (it != object_.end()) return &*it;
    if (required && error_.empty()) error_ = fmt::format("missing field \"{}\"", field);
    return nullptr;
  }

  const Json& object_;
  std::string error_;
};

}  // namespace

Result<DumpRecord, DumpReadError> parse_dump_line(std::string_view line) {
  Json object = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return Err{DumpReadError(DumpReadError::Malformed, "not valid JSON")};
  if (!object.is_object()) return Err{DumpReadError(DumpReadError::Malformed, "not a JSON object")};

  DumpRecord r;
  std::string direction;
  std::string kind;
  FieldReader read(object);
  read.number("ts", r.ts);
  read.text("g", r.group);
  read.text("k", r.key);
  read.number("n", r.node_no);
  read.number("s", r.sequence_no);
  read.number("t", r.trace_id);
  if (object.contains("th")) read.number("th", r.thread);
  read.text("d", direction);
  read.text("cl", r.class_name);
  read.text("mn", r.message_name);
  read.text("mp", r.protocol);
  read.text("mk", kind);
  read.body("m", r.body_json);
  read.number("c", r.correlation_id);
  if (read.error().empty()) {
    if (direction == "In" || direction == "Out") {
      r.direction = direction == "In" ? Direction::In : Direction::Out;
    } else {
      read.fail("d", "\"In\" or \"Out\"");
    }
  }
  if (read.error().empty()) {
    if (kind == "Regular") {
      r.kind = MessageKind::Regular;
    } else if (kind == "Request") {
      r.kind = MessageKind::Request;
    } else if (kind == "Response") {
      r.kind = MessageKind::Response;
    } else {
      read.fail("mk", "\"Regular\", \"Request\" or \"Response\"");
    }
  }
  if (!read.error().empty()) return Err{DumpReadError(DumpReadError::Malformed, read.error())};
  return r;
}

}  // namespace elfin::dumper
