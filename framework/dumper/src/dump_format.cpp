#include <elfin/dumper/dump_format.hpp>

#include <cmath>

#include <fmt/format.h>

namespace elfin::dumper {

namespace {

// The length of the valid UTF-8 sequence at the start of `s`, or 0 if it is not one.
std::size_t utf8_sequence(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  std::size_t n = 0;
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

void append_utf8_string(std::string_view text, std::string& out) {
  std::string clean;
  clean.reserve(text.size());
  while (!text.empty()) {
    std::size_t n = utf8_sequence(text);
    if (n == 0) {
      clean += "\xEF\xBF\xBD";  // U+FFFD for a byte that starts no valid sequence
      n = 1;
    } else {
      clean.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
  append_json_string(clean, out);
}

void append_bytes(const char* data, std::uint32_t size, std::string& out) {
  out += '[';
  for (std::uint32_t i = 0; i < size; ++i) {
    if (i != 0) out += ',';
    fmt::format_to(std::back_inserter(out), "{}", static_cast<unsigned>(static_cast<unsigned char>(data[i])));
  }
  out += ']';
}

}  // namespace

void append_msgpack_as_json(const msgpack::object& o, std::string& out) {
  auto it = std::back_inserter(out);
  switch (o.type) {
    case msgpack::type::NIL:
      out += "null";
      break;
    case msgpack::type::BOOLEAN:
      out += o.via.boolean ? "true" : "false";
      break;
    case msgpack::type::POSITIVE_INTEGER:
      fmt::format_to(it, "{}", o.via.u64);
      break;
    case msgpack::type::NEGATIVE_INTEGER:
      fmt::format_to(it, "{}", o.via.i64);
      break;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      if (std::isfinite(o.via.f64)) {
        fmt::format_to(it, "{}", o.via.f64);
      } else {
        out += "null";
      }
      break;
    case msgpack::type::STR:
      append_utf8_string(std::string_view{o.via.str.ptr, o.via.str.size}, out);
      break;
    case msgpack::type::BIN:
      append_bytes(o.via.bin.ptr, o.via.bin.size, out);
      break;
    case msgpack::type::EXT:
      fmt::format_to(it, "{{\"ext\":{},\"data\":", static_cast<int>(o.via.ext.type()));
      append_bytes(o.via.ext.data(), o.via.ext.size, out);
      out += '}';
      break;
    case msgpack::type::ARRAY:
      out += '[';
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
        if (i != 0) out += ',';
        append_msgpack_as_json(o.via.array.ptr[i], out);
      }
      out += ']';
      break;
    case msgpack::type::MAP:
      out += '{';
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        if (i != 0) out += ',';
        const auto& kv = o.via.map.ptr[i];
        if (kv.key.type == msgpack::type::STR) {
          append_utf8_string(std::string_view{kv.key.via.str.ptr, kv.key.via.str.size}, out);
        } else {
          std::string key;
          append_msgpack_as_json(kv.key, key);
          append_json_string(key, out);
        }
        out += ':';
        append_msgpack_as_json(kv.val, out);
      }
      out += '}';
      break;
  }
}

std::string msgpack_to_json(std::string_view bytes) {
  try {
    auto handle = msgpack::unpack(bytes.data(), bytes.size());
    std::string out;
    append_msgpack_as_json(handle.get(), out);
    return out;
  } catch (const std::exception&) {
    return "null";
  }
}

std::string truncate_body(std::string json, std::size_t max_size) {
  if (json.size() <= max_size) return json;
  std::size_t cut = max_size;
  while (cut > 0 && (static_cast<unsigned char>(json[cut]) & 0xC0) == 0x80) --cut;  // not inside a code point
  std::string text = json.substr(0, cut) + fmt::format("…<truncated: {} bytes>", json.size());
  std::string out;
  append_json_string(text, out);
  return out;
}

DumpRecord to_record(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size) {
  DumpRecord r;
  r.ts = dump.timestamp_ns;
  r.group = dump.group != nullptr ? *dump.group : std::string{};
  if (dump.key) r.key = *dump.key;
  r.node_no = node_no;
  r.sequence_no = dump.sequence_no;
  r.trace_id = dump.trace_id.raw();
  r.thread = dump.thread_no;
  r.direction = dump.direction == dumping::Direction::In ? Direction::In : Direction::Out;
  r.message_name = std::string{dump.vtable->name};
  r.protocol = std::string{dump.vtable->protocol};
  switch (dump.kind) {
    case elfin::MessageKind::Regular:
      r.kind = dumper::MessageKind::Regular;
      break;
    case elfin::MessageKind::Request:
      r.kind = dumper::MessageKind::Request;
      break;
    case elfin::MessageKind::Response:
      r.kind = dumper::MessageKind::Response;
      break;
  }
  r.body_json = truncate_body(msgpack_to_json(dumping::encode_body(dump)), max_body_size);
  if (dump.correlation_id != 0) r.correlation_id = dump.correlation_id;
  return r;
}

}  // namespace elfin::dumper
