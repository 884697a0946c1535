#include <elfin/dumper/dump_format.hpp>

#include <cmath>
#include <cstring>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "json_text.hpp"

namespace elfin::dumper {

namespace {

using detail::append_int;
using detail::append_uint;

// Reads one msgpack object from bytes and appends its JSON, without building a msgpack::object.
// Every read checks the bytes left first; `value` returns false when the object is cut short,
// uses the unused type byte 0xc1 or nests deeper than kMaxBodyNesting, and the caller then drops
// whatever was appended.
class MsgpackToJson {
 public:
  MsgpackToJson(std::string_view bytes, detail::TextOut& out, std::string& key_text)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data())), end_(p_ + bytes.size()), out_(out), key_(key_text) {}

  [[nodiscard]] bool value(std::size_t depth) {
    if (p_ == end_) return false;
    const unsigned char b = *p_++;
    if (b <= 0x7f) {  // positive fixint
      append_uint(b, out_);
      return true;
    }
    if (b >= 0xe0) {  // negative fixint
      append_int(static_cast<std::int8_t>(b), out_);
      return true;
    }
    if (b <= 0x8f) return map(b & 0x0fU, depth);
    if (b <= 0x9f) return array(b & 0x0fU, depth);
    if (b <= 0xbf) return str(b & 0x1fU);
    switch (b) {
      case 0xc0:
        out_.literal("null");
        return true;
      case 0xc2:
        out_.literal("false");
        return true;
      case 0xc3:
        out_.literal("true");
        return true;
      case 0xc4:
        return with_length<std::uint8_t>([&](std::uint32_t n) { return bytes(n); });
      case 0xc5:
        return with_length<std::uint16_t>([&](std::uint32_t n) { return bytes(n); });
      case 0xc6:
        return with_length<std::uint32_t>([&](std::uint32_t n) { return bytes(n); });
      case 0xc7:
        return with_length<std::uint8_t>([&](std::uint32_t n) { return ext(n); });
      case 0xc8:
        return with_length<std::uint16_t>([&](std::uint32_t n) { return ext(n); });
      case 0xc9:
        return with_length<std::uint32_t>([&](std::uint32_t n) { return ext(n); });
      case 0xca: {
        if (!has(4)) return false;
        float f = 0;
        const auto bits = read<std::uint32_t>();
        std::memcpy(&f, &bits, sizeof f);
        append_double(f);  // as msgpack-c widens it: 1.1f shows as 1.100000023841858
        return true;
      }
      case 0xcb: {
        if (!has(8)) return false;
        double d = 0;
        const auto bits = read<std::uint64_t>();
        std::memcpy(&d, &bits, sizeof d);
        append_double(d);
        return true;
      }
      case 0xcc:
        return unsigned_int<std::uint8_t>();
      case 0xcd:
        return unsigned_int<std::uint16_t>();
      case 0xce:
        return unsigned_int<std::uint32_t>();
      case 0xcf:
        return unsigned_int<std::uint64_t>();
      case 0xd0:
        return signed_int<std::uint8_t>();
      case 0xd1:
        return signed_int<std::uint16_t>();
      case 0xd2:
        return signed_int<std::uint32_t>();
      case 0xd3:
        return signed_int<std::uint64_t>();
      case 0xd4:
        return ext(1);
      case 0xd5:
        return ext(2);
      case 0xd6:
        return ext(4);
      case 0xd7:
        return ext(8);
      case 0xd8:
        return ext(16);
      case 0xd9:
        return with_length<std::uint8_t>([&](std::uint32_t n) { return str(n); });
      case 0xda:
        return with_length<std::uint16_t>([&](std::uint32_t n) { return str(n); });
      case 0xdb:
        return with_length<std::uint32_t>([&](std::uint32_t n) { return str(n); });
      case 0xdc:
        return with_length<std::uint16_t>([&](std::uint32_t n) { return array(n, depth); });
      case 0xdd:
        return with_length<std::uint32_t>([&](std::uint32_t n) { return array(n, depth); });
      case 0xde:
        return with_length<std::uint16_t>([&](std::uint32_t n) { return map(n, depth); });
      case 0xdf:
        return with_length<std::uint32_t>([&](std::uint32_t n) { return map(n, depth); });
      default:  // 0xc1: never used
        return false;
    }
  }

 private:
  [[nodiscard]] bool has(std::size_t n) const { return static_cast<std::size_t>(end_ - p_) >= n; }

  // A big-endian unsigned integer; the caller checked has(sizeof(U)).
  template <class U>
  U read() {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) v = (v << 8) | p_[i];
    p_ += sizeof(U);
    return static_cast<U>(v);
  }

  template <class U, class Then>
  bool with_length(Then then) {
    if (!has(sizeof(U))) return false;
    return then(static_cast<std::uint32_t>(read<U>()));
  }

  template <class U>
  bool unsigned_int() {
    if (!has(sizeof(U))) return false;
    append_uint(read<U>(), out_);
    return true;
  }

  template <class U>
  bool signed_int() {
    if (!has(sizeof(U))) return false;
    append_int(static_cast<std::make_signed_t<U>>(read<U>()), out_);
    return true;
  }

  void append_double(double d) {
    if (std::isfinite(d)) {
      // The shortest text that reads back as d, as fmt's "{}" writes it (at most 24 characters).
      char* p = out_.room_for(detail::TextOut::kMaxRoom);
      out_.advance(fmt::format_to(p, FMT_COMPILE("{}"), d));
    } else {
      out_.literal("null");
    }
  }

  bool str(std::uint32_t n) {
    if (!has(n)) return false;
    detail::append_utf8_json_string(std::string_view{reinterpret_cast<const char*>(p_), n}, out_);
    p_ += n;
    return true;
  }

  bool bytes(std::uint32_t n) {
    if (!has(n)) return false;
    append_byte_array(n);
    return true;
  }

  // The next `n` bytes (the caller checked has(n)) as an array of numbers.
  void append_byte_array(std::uint32_t n) {
    out_.put('[');
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i != 0) out_.put(',');
      append_uint(p_[i], out_);
    }
    out_.put(']');
    p_ += n;
  }

  // An extension: its type byte, then `n` bytes of data.
  bool ext(std::uint32_t n) {
    if (!has(std::size_t{1} + n)) return false;
    out_.literal(R"({"ext":)");
    append_int(static_cast<std::int8_t>(*p_++), out_);
    out_.literal(R"(,"data":)");
    append_byte_array(n);
    out_.put('}');
    return true;
  }

  bool array(std::uint32_t n, std::size_t depth) {
    if (depth >= kMaxBodyNesting) return false;
    out_.put('[');
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i != 0) out_.put(',');
      if (!value(depth + 1)) return false;
    }
    out_.put(']');
    return true;
  }

  bool map(std::uint32_t n, std::size_t depth) {
    if (depth >= kMaxBodyNesting) return false;
    out_.put('{');
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i != 0) out_.put(',');
      if (!key(depth + 1)) return false;
      out_.put(':');
      if (!value(depth + 1)) return false;
    }
    out_.put('}');
    return true;
  }

  // A string key is the string; any other key is its JSON text, written out and then rewritten
  // as a string (`{"1":true}` for the key 1).
  bool key(std::size_t depth) {
    if (p_ == end_) return false;
    const unsigned char b = *p_;
    if ((b >= 0xa0 && b <= 0xbf) || (b >= 0xd9 && b <= 0xdb)) return value(depth);
    const std::size_t at = out_.size();
    if (!value(depth)) return false;
    // key_ is free again here: a key nested in this one was done with it before this one ended.
    key_.assign(out_.since(at));
    out_.truncate(at);
    detail::append_json_string(key_, out_);
    return true;
  }

  const unsigned char* p_;
  const unsigned char* const end_;
  detail::TextOut& out_;
  std::string& key_;
};

// Writes the JSON of msgpack `bytes`, or `null`; `text` is scratch.
void append_body_json(std::string_view bytes, detail::TextOut& out, std::string& text) {
  const std::size_t at = out.size();
  if (!MsgpackToJson(bytes, out, text).value(0)) {
    out.truncate(at);
    out.literal("null");
  }
}

// Where a body of JSON cut to at most `max_size` bytes ends: not inside a character.
std::size_t cut_at(std::string_view json, std::size_t max_size) {
  std::size_t cut = max_size;
  while (cut > 0 && (static_cast<unsigned char>(json[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// Writes the string that stands for a body of `full_size` bytes of JSON cut to `start`.
void append_cut_body(std::string_view start, std::size_t full_size, detail::TextOut& out) {
  out.put('"');
  detail::append_json_chars(start, out);
  out.literal("…<truncated: ");
  append_uint(full_size, out);
  out.literal(" bytes>\"");
}

Direction direction_of(const dumping::Dump& dump) {
  return dump.direction == dumping::Direction::In ? Direction::In : Direction::Out;
}

MessageKind kind_of(const dumping::Dump& dump) {
  switch (dump.kind) {
    case elfin::MessageKind::Regular:
      return MessageKind::Regular;
    case elfin::MessageKind::Request:
      return MessageKind::Request;
    case elfin::MessageKind::Response:
      return MessageKind::Response;
  }
  return MessageKind::Regular;
}

}  // namespace

std::string msgpack_to_json(std::string_view bytes) {
  std::string json;
  std::string key_text;
  {
    detail::TextOut out(json);
    append_body_json(bytes, out, key_text);
  }
  return json;
}

std::string truncate_body(std::string json, std::size_t max_size) {
  if (json.size() <= max_size) return json;
  std::string cut;
  {
    detail::TextOut out(cut);
    append_cut_body(std::string_view{json}.substr(0, cut_at(json, max_size)), json.size(), out);
  }
  return cut;
}

std::string_view RecurringJson::group(const std::string& group) {
  Entry& e = groups_[slot(&group)];
  if (e.source != &group || e.first != group) {
    e.source = &group;
    e.first = group;
    e.json.clear();
    detail::TextOut out(e.json);
    out.literal(R"(,"g":)");
    detail::append_json_string(group, out);
  }
  return e.json;
}

std::string_view RecurringJson::message(const MessageVTable& vtable) {
  Entry& e = messages_[slot(&vtable)];
  if (e.source != &vtable || e.first != vtable.name || e.second != vtable.protocol) {
    e.source = &vtable;
    e.first = vtable.name;
    e.second = vtable.protocol;
    e.json.clear();
    detail::TextOut out(e.json);
    out.literal(R"(,"mn":)");
    detail::append_json_string(vtable.name, out);
    out.literal(R"(,"mp":)");
    detail::append_json_string(vtable.protocol, out);
  }
  return e.json;
}

void append_dump_line(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size,
                      DumpLineScratch& scratch, std::string& line) {
  scratch.body.clear();
  dumping::append_body(dump, scratch.body);

  // append_line_head's fields in its order, with the recurring texts escaped once.
  static const std::string kNoGroup;
  detail::TextOut out(line);
  out.literal(R"({"ts":)");
  detail::append_uint(dump.timestamp_ns, out);
  out.write(scratch.recurring.group(dump.group != nullptr ? *dump.group : kNoGroup));
  if (dump.key != nullptr) {
    out.literal(R"(,"k":)");
    detail::append_json_string(*dump.key, out);
  }
  out.literal(R"(,"n":)");
  append_uint(node_no, out);
  out.literal(R"(,"s":)");
  append_uint(dump.sequence_no, out);
  out.literal(R"(,"t":)");
  append_uint(dump.trace_id.raw(), out);
  out.literal(R"(,"th":)");
  append_uint(dump.thread_no, out);
  if (dump.direction == dumping::Direction::In) {
    out.literal(R"(,"d":"In")");
  } else {
    out.literal(R"(,"d":"Out")");
  }
  out.write(scratch.recurring.message(*dump.vtable));
  detail::append_kind_and_body_key(kind_of(dump), out);

  // The body's JSON goes straight into the line; the rare one over the limit is taken back out.
  const std::size_t at = out.size();
  append_body_json(scratch.body, out, scratch.text);
  if (const std::size_t size = out.size() - at; size > max_body_size) {
    const std::string_view json = out.since(at);
    scratch.text.assign(json.substr(0, cut_at(json, max_body_size)));
    out.truncate(at);
    append_cut_body(scratch.text, size, out);
  }

  detail::append_line_tail(dump.correlation_id != 0 ? std::optional{dump.correlation_id} : std::nullopt, out);
}

DumpRecord to_record(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size) {
  DumpRecord r;
  r.ts = dump.timestamp_ns;
  r.group = dump.group != nullptr ? *dump.group : std::string{};
  if (dump.key != nullptr) r.key = *dump.key;
  r.node_no = node_no;
  r.sequence_no = dump.sequence_no;
  r.trace_id = dump.trace_id.raw();
  r.thread = dump.thread_no;
  r.direction = direction_of(dump);
  r.message_name = std::string{dump.vtable->name};
  r.protocol = std::string{dump.vtable->protocol};
  r.kind = kind_of(dump);
  r.body_json = truncate_body(msgpack_to_json(dumping::encode_body(dump)), max_body_size);
  if (dump.correlation_id != 0) r.correlation_id = dump.correlation_id;
  return r;
}

}  // namespace elfin::dumper
