#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/dumper/dump_format.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/messages.hpp>

#include "dumper_test_support.hpp"

using namespace elfin;
using namespace elfin::dumper;

namespace {

struct Reading {
  std::string sensor;
  double value = 0;
  std::vector<std::int32_t> history;
  std::map<std::string, bool> flags;
  Hidden<std::string> token;
  ELFIN_MESSAGE(dumper_test, Reading, sensor, value, history, flags, token);
};

std::string pack(const auto& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

const std::string kGroup = "sensors";
const std::string kKey = "7";

dumping::Dump dump_of(Reading reading) {
  dumping::Dump d;
  d.group = &kGroup;
  d.key = &kKey;
  d.sequence_no = 4;
  d.timestamp_ns = 1'795'341'600'123'456'789;
  d.trace_id = TraceId{7226239398017728512};
  d.thread_no = 2;
  d.direction = dumping::Direction::Out;
  d.kind = elfin::MessageKind::Regular;
  d.vtable = &vtable_of<Reading>();
  d.message = Envelope::make(std::move(reading), Addr{}, d.trace_id);
  return d;
}

// --- reference ------------------------------------------------------------------------------------
// The dump-file line made the plain way: msgpack::unpack into a msgpack::object, fmt with run-time
// format strings, strings escaped one character at a time, DumpRecord in between. Slow, and simple
// enough to read against the format's description; it holds append_dump_line to the same bytes.
namespace reference {

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

void json_string(std::string_view text, std::string& out) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void utf8_string(std::string_view text, std::string& out) {
  std::string clean;
  while (!text.empty()) {
    std::size_t n = utf8_sequence(text);
    if (n == 0) {
      clean += "\xEF\xBF\xBD";
      n = 1;
    } else {
      clean.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
  json_string(clean, out);
}

void bytes(const char* data, std::uint32_t size, std::string& out) {
  out += '[';
  for (std::uint32_t i = 0; i < size; ++i) {
    if (i != 0) out += ',';
    fmt::format_to(std::back_inserter(out), "{}", static_cast<unsigned>(static_cast<unsigned char>(data[i])));
  }
  out += ']';
}

void msgpack_json(const msgpack::object& o, std::string& out) {
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
      utf8_string(std::string_view{o.via.str.ptr, o.via.str.size}, out);
      break;
    case msgpack::type::BIN:
      bytes(o.via.bin.ptr, o.via.bin.size, out);
      break;
    case msgpack::type::EXT:
      fmt::format_to(it, "{{\"ext\":{},\"data\":", static_cast<int>(o.via.ext.type()));
      bytes(o.via.ext.data(), o.via.ext.size, out);
      out += '}';
      break;
    case msgpack::type::ARRAY:
      out += '[';
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
        if (i != 0) out += ',';
        msgpack_json(o.via.array.ptr[i], out);
      }
      out += ']';
      break;
    case msgpack::type::MAP:
      out += '{';
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        if (i != 0) out += ',';
        const auto& kv = o.via.map.ptr[i];
        if (kv.key.type == msgpack::type::STR) {
          utf8_string(std::string_view{kv.key.via.str.ptr, kv.key.via.str.size}, out);
        } else {
          std::string key;
          msgpack_json(kv.key, key);
          json_string(key, out);
        }
        out += ':';
        msgpack_json(kv.val, out);
      }
      out += '}';
      break;
  }
}

std::string body_json(std::string_view bytes) {
  try {
    auto handle = msgpack::unpack(bytes.data(), bytes.size());
    std::string out;
    msgpack_json(handle.get(), out);
    return out;
  } catch (const std::exception&) {
    return "null";
  }
}

std::string truncate(std::string json, std::size_t max_size) {
  if (json.size() <= max_size) return json;
  std::size_t cut = max_size;
  while (cut > 0 && (static_cast<unsigned char>(json[cut]) & 0xC0) == 0x80) --cut;
  std::string text = json.substr(0, cut) + fmt::format("…<truncated: {} bytes>", json.size());
  std::string out;
  json_string(text, out);
  return out;
}

std::string line(const dumping::Dump& d, std::uint16_t node_no, std::size_t max_body_size) {
  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"ts\":{},\"g\":", d.timestamp_ns);
  json_string(d.group != nullptr ? *d.group : std::string{}, out);
  if (d.key) {
    out += ",\"k\":";
    json_string(*d.key, out);
  }
  fmt::format_to(it, ",\"n\":{},\"s\":{},\"t\":{},\"th\":{},\"d\":\"{}\"", node_no, d.sequence_no, d.trace_id.raw(),
                 d.thread_no, d.direction == dumping::Direction::In ? "In" : "Out");
  out += ",\"mn\":";
  json_string(d.vtable->name, out);
  out += ",\"mp\":";
  json_string(d.vtable->protocol, out);
  const char* kind = d.kind == elfin::MessageKind::Request    ? "Request"
                     : d.kind == elfin::MessageKind::Response ? "Response"
                                                              : "Regular";
  fmt::format_to(it, ",\"mk\":\"{}\",\"m\":", kind);
  out += truncate(body_json(dumping::encode_body(d)), max_body_size);
  if (d.correlation_id != 0) fmt::format_to(it, ",\"c\":{}", d.correlation_id);
  out += "}\n";
  return out;
}

}  // namespace reference

// --- random dumps ----------------------------------------------------------------------------------

// Random dumps whose texts and msgpack bodies reach every branch of the formatter: escapes,
// control characters, non-ASCII and invalid UTF-8, every msgpack type in each of its encodings,
// non-string map keys, cut and corrupted bodies.
class RandomDumps {
 public:
  explicit RandomDumps(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t below(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
  std::uint64_t any() { return rng_(); }

  std::string text(bool valid_utf8) {
    static const std::vector<std::string> kValid = {
        "a",    "Z",    "0",    " ", "\"", "\\", "\n", "\r", "\t",   std::string(1, '\0'),        "\x01", "\x08",
        "\x0c", "\x1f", "\x7f", "/", "<",  "é",  "€",  "😀", "käse", "abcdefghijklmnopqrstuvwxyz"};
    static const std::vector<std::string> kInvalid = {"\xff",
                                                      "\xc0",
                                                      "\xc1",
                                                      "\x80",
                                                      "\xbf",
                                                      "\xe2\x82",
                                                      "\xc3",
                                                      "\xf5\x80\x80\x80",
                                                      "\xf4\x90\x80\x80",
                                                      "\xed\xa0\x80",
                                                      "\xe0\x80\x80",
                                                      "\xf0\x9f\x98"};
    const std::uint64_t pieces = chance(80) ? below(8) : chance(80) ? 8 + below(40) : 60 + below(80);
    std::string out;
    for (std::uint64_t i = 0; i < pieces; ++i) {
      if (!valid_utf8 && chance(15)) {
        out += kInvalid[below(kInvalid.size())];
      } else {
        out += kValid[below(kValid.size())];
      }
    }
    return out;
  }

  /// A msgpack body: valid, or (sometimes) cut short or with a byte changed.
  std::string body() {
    std::string bytes = value(0);
    if (chance(5) && !bytes.empty()) bytes.resize(below(bytes.size()));    // cut short
    if (chance(5) && !bytes.empty()) bytes[below(bytes.size())] = '\xc1';  // the unused type byte
    if (chance(5)) bytes += value(0);                                      // bytes after the object
    return bytes;
  }

  dumping::Dump dump() {
    const bool valid = chance(50);
    dumping::Dump d;
    d.group = &keep(text(valid));
    if (chance(70)) d.key = &keep(text(valid));
    d.sequence_no = chance(50) ? below(1000) : any();
    d.timestamp_ns = chance(50) ? 1'795'341'600'000'000'000 + below(1'000'000'000) : any();
    d.trace_id = TraceId{any()};
    d.thread_no = static_cast<std::uint32_t>(any());
    d.direction = chance(50) ? dumping::Direction::In : dumping::Direction::Out;
    d.kind = static_cast<elfin::MessageKind>(below(3));
    if (d.kind != elfin::MessageKind::Regular || chance(10)) d.correlation_id = chance(80) ? 1 + below(1000) : any();
    MessageVTable& vtable = vtables_.emplace_back(vtable_of<Reading>());
    vtable.name = keep(text(valid));
    vtable.protocol = keep(text(valid));
    d.vtable = &vtable;
    d.encoded =
        std::make_unique<const std::string>(body());  // no envelope: the body is these bytes, as a response's is
    return d;
  }

 private:
  const std::string& keep(std::string text) { return texts_.emplace_back(std::move(text)); }

  template <class T>
  static void put_big_endian(std::string& out, T value) {
    for (std::size_t i = sizeof(T); i-- > 0;)
      out += static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xFF);
  }

  std::string value(int depth) {
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> pack(buffer);
    std::string raw;  // or bytes written by hand, for the encodings msgpack-c does not choose
    const int kinds = depth < 4 ? 14 : 11;
    switch (below(kinds)) {
      case 0:
        pack.pack_nil();
        break;
      case 1:
        chance(50) ? pack.pack_true() : pack.pack_false();
        break;
      case 2:  // unsigned, each width
        switch (below(5)) {
          case 0:
            pack.pack_fix_uint8(static_cast<std::uint8_t>(any()));
            break;
          case 1:
            pack.pack_fix_uint16(static_cast<std::uint16_t>(any()));
            break;
          case 2:
            pack.pack_fix_uint32(static_cast<std::uint32_t>(any()));
            break;
          case 3:
            pack.pack_fix_uint64(chance(50) ? any() : std::numeric_limits<std::uint64_t>::max());
            break;
          default:
            pack.pack_uint64(below(200));  // positive fixint mostly
        }
        break;
      case 3:  // signed, each width, either sign
        switch (below(5)) {
          case 0:
            pack.pack_fix_int8(static_cast<std::int8_t>(any()));
            break;
          case 1:
            pack.pack_fix_int16(static_cast<std::int16_t>(any()));
            break;
          case 2:
            pack.pack_fix_int32(static_cast<std::int32_t>(any()));
            break;
          case 3:
            pack.pack_fix_int64(chance(50) ? static_cast<std::int64_t>(any())
                                           : std::numeric_limits<std::int64_t>::min());
            break;
          default:
            pack.pack_int64(-static_cast<std::int64_t>(below(40)));  // negative fixint mostly
        }
        break;
      case 4: {  // float32: any bits (NaN, infinities, subnormals) or a plain value
        std::uint32_t bits = static_cast<std::uint32_t>(any());
        float f = 0;
        std::memcpy(&f, &bits, sizeof f);
        pack.pack_float(chance(50) ? f : static_cast<float>(below(2000)) / 8.0F - 100.0F);
        break;
      }
      case 5: {  // float64, the same
        static const double kPlain[] = {0.0,
                                        -0.0,
                                        0.1,
                                        1.5,
                                        -2.25,
                                        1e21,
                                        1e-7,
                                        123456789.125,
                                        5e-324,
                                        1e300,
                                        std::numeric_limits<double>::quiet_NaN(),
                                        -std::numeric_limits<double>::infinity()};
        std::uint64_t bits = any();
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        pack.pack_double(chance(50) ? d : kPlain[below(std::size(kPlain))]);
        break;
      }
      case 6:
      case 7: {  // strings, common in bodies
        const std::string s = text(chance(30));
        if (chance(20)) {
          raw = s.size() < 256 ? std::string{"\xd9"} + static_cast<char>(s.size()) : std::string{"\xda"};
          if (s.size() >= 256) put_big_endian(raw, static_cast<std::uint16_t>(s.size()));
          raw += s;
        } else {
          pack.pack_str(static_cast<std::uint32_t>(s.size()));
          pack.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
        }
        break;
      }
      case 8: {
        const std::string s = text(false);
        pack.pack_bin(static_cast<std::uint32_t>(s.size()));
        pack.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
        break;
      }
      case 9: {  // fixext 1/2/4/8/16 and ext 8
        static const std::uint32_t kSizes[] = {0, 1, 2, 3, 4, 8, 16, 17, 40};
        const std::uint32_t size = kSizes[below(std::size(kSizes))];
        std::string data;
        for (std::uint32_t i = 0; i < size; ++i) data += static_cast<char>(any());
        pack.pack_ext(size, static_cast<std::int8_t>(any()));
        pack.pack_ext_body(data.data(), size);
        break;
      }
      case 10:  // a body that is only a string key map, as messages are
      case 11: {
        const std::uint64_t n = chance(90) ? below(5) : 16 + below(4);
        if (chance(20)) {
          raw = "\xde";
          put_big_endian(raw, static_cast<std::uint16_t>(n));
        } else {
          pack.pack_map(static_cast<std::uint32_t>(n));
        }
        std::string entries;
        for (std::uint64_t i = 0; i < n; ++i) {
          entries += chance(75) ? string_key() : value(depth + 1);  // non-string keys too
          entries += depth < 4 ? value(depth + 1) : scalar();
        }
        return std::string(buffer.data(), buffer.size()) + raw + entries;
      }
      default: {  // arrays
        const std::uint64_t n = chance(90) ? below(5) : 16 + below(4);
        if (chance(20)) {
          raw = "\xdc";
          put_big_endian(raw, static_cast<std::uint16_t>(n));
        } else {
          pack.pack_array(static_cast<std::uint32_t>(n));
        }
        std::string items;
        for (std::uint64_t i = 0; i < n; ++i) items += value(depth + 1);
        return std::string(buffer.data(), buffer.size()) + raw + items;
      }
    }
    return std::string(buffer.data(), buffer.size()) + raw;
  }

  std::string string_key() {
    msgpack::sbuffer buffer;
    msgpack::pack(buffer, text(chance(50)));
    return std::string(buffer.data(), buffer.size());
  }
  std::string scalar() {
    msgpack::sbuffer buffer;
    msgpack::pack(buffer, static_cast<std::int64_t>(any()));
    return std::string(buffer.data(), buffer.size());
  }

  std::mt19937_64 rng_;
  std::deque<std::string> texts_;  // what the dumps point to
  std::deque<MessageVTable> vtables_;
};

std::string line_of(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size) {
  DumpLineScratch scratch;
  std::string line;
  append_dump_line(dump, node_no, max_body_size, scratch, line);
  return line;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("msgpack bodies become JSON", "[dumper][format]") {
  CHECK(msgpack_to_json(pack(std::map<std::string, int>{{"a", 1}, {"b", -2}})) == R"({"a":1,"b":-2})");
  CHECK(msgpack_to_json(pack(std::vector<double>{1.5, 0.25})) == "[1.5,0.25]");
  CHECK(msgpack_to_json(pack(msgpack::type::nil_t{})) == "null");
  CHECK(msgpack_to_json(pack(std::map<int, bool>{{1, true}})) == R"({"1":true})");  // keys become strings
  CHECK(msgpack_to_json(pack(std::string{"quote \" and \\ and \n"})) == R"("quote \" and \\ and \n")");
  CHECK(msgpack_to_json(pack(std::string{"bad \xff byte"})) == "\"bad \xEF\xBF\xBD byte\"");  // still valid UTF-8
  CHECK(msgpack_to_json(pack(std::numeric_limits<double>::infinity())) == "null");
  msgpack::sbuffer bin;
  msgpack::packer<msgpack::sbuffer>(bin).pack_bin(2).pack_bin_body("\x01\xff", 2);
  CHECK(msgpack_to_json(std::string(bin.data(), bin.size())) == "[1,255]");
  CHECK(msgpack_to_json("\xc1") == "null");  // not msgpack
  CHECK(msgpack_to_json("") == "null");
  CHECK(msgpack_to_json("\x92\x01") == "null");  // an array of two with one item
  CHECK(msgpack_to_json("\xa5"
                        "abc") == "null");            // a string cut short
  CHECK(msgpack_to_json("\xcd\x01") == "null");       // a uint16 cut short
  CHECK(msgpack_to_json("\x81\xa1k\xc1") == "null");  // a bad value inside a map
  CHECK(msgpack_to_json("\x01\xc1") == "1");          // bytes after the object are ignored
  CHECK(msgpack_to_json("\xd4\xff\x07") == R"({"ext":-1,"data":[7]})");
  CHECK(msgpack_to_json("\x82\xc0\x01\x91\xa1\"\x02") == R"({"null":1,"[\"\\\"\"]":2})");  // keys: JSON text
  CHECK(msgpack_to_json("\xca\x3f\x8c\xcc\xcd") == "1.100000023841858");  // float32, widened as msgpack-c does
  CHECK(msgpack_to_json(std::string("\xd3\x80\0\0\0\0\0\0\0", 9)) == "-9223372036854775808");
}

TEST_CASE("integers of every length are written whole", "[dumper][format]") {
  std::vector<std::uint64_t> values{0, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t p = 1; p <= std::numeric_limits<std::uint64_t>::max() / 10; p *= 10) {
    values.insert(values.end(), {p - 1, p, p + 1, p * 10 - 1});  // both sides of each digit count
  }
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t p = std::uint64_t{1} << bit;
    values.insert(values.end(), {p - 1, p, p + 1});  // and of each bit width
  }
  for (std::uint64_t v : values) {
    INFO(v);
    CHECK(msgpack_to_json(pack(v)) == std::to_string(v));
    if (v <= std::uint64_t{1} << 63) {
      const std::int64_t negative =
          v == std::uint64_t{1} << 63 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
      CHECK(msgpack_to_json(pack(negative)) == std::to_string(negative));
    }
  }
}

TEST_CASE("a body nested deeper than the limit is null", "[dumper][format]") {
  auto nested = [](std::size_t depth, char container) {
    return std::string(depth, container) + std::string(1, '\x01');  // [[...[1]...]] or [[..{}]]
  };
  const std::size_t limit = kMaxBodyNesting;
  CHECK(msgpack_to_json(nested(limit, '\x91')) == std::string(limit, '[') + "1" + std::string(limit, ']'));
  CHECK(msgpack_to_json(nested(limit + 1, '\x91')) == "null");
  // Maps count too: {"":{"":...}}
  std::string maps;
  for (std::size_t i = 0; i <= limit; ++i) maps += "\x81\xa0";
  maps += '\x01';
  CHECK(msgpack_to_json(maps) == "null");
  CHECK(msgpack_to_json(maps.substr(2)).starts_with(R"({"":{"":)"));
}

TEST_CASE("a body over the size limit is cut at a character boundary and marked", "[dumper][format]") {
  CHECK(truncate_body(R"({"a":1})", 100) == R"({"a":1})");
  CHECK(truncate_body(R"({"text":"abcdefgh"})", 10) == R"("{\"text\":\"a…<truncated: 19 bytes>")");
  CHECK(truncate_body("\"ééé\"", 4) == "\"\\\"é…<truncated: 8 bytes>\"");  // é is two bytes: never split
}

TEST_CASE("a recorded dump becomes a record with the book's fields", "[dumper][format]") {
  Reading reading{"t1", 21.5, {1, -2}, {{"ok", true}}, std::string{"secret"}};
  auto record = to_record(dump_of(reading), 3, 64 * 1024);
  CHECK(record.ts == 1'795'341'600'123'456'789);
  CHECK(record.group == "sensors");
  CHECK(record.key == "7");
  CHECK(record.node_no == 3);
  CHECK(record.sequence_no == 4);
  CHECK(record.trace_id == 7226239398017728512);
  CHECK(record.thread == 2);
  CHECK(record.direction == Direction::Out);
  CHECK(record.message_name == "Reading");
  CHECK(record.protocol == "dumper_test");
  CHECK(record.kind == dumper::MessageKind::Regular);
  CHECK_FALSE(record.correlation_id.has_value());
  CHECK(record.body_json == R"({"sensor":"t1","value":21.5,"history":[1,-2],"flags":{"ok":true},"token":"<hidden>"})");
  auto parsed = parse_dump_line([&] {
    std::string line;
    append_json_line(record, line);
    line.pop_back();
    return line;
  }());
  REQUIRE(parsed.ok());
  CHECK(*parsed == record);
}

TEST_CASE("the file writer appends lines, reopens after rotation and reports errors", "[dumper][writer]") {
  dumper::test::TempDir dir;
  auto path = dir.file("app.dump");
  auto read_lines = [](const std::string& file) {
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  {
    DumpFileWriter writer(path, 1, 64 * 1024);
    std::vector<dumping::DumpChunk> batch(1);  // one recording thread's chunk
    auto later = dump_of(Reading{"later", 1, {}, {}, {}});
    later.timestamp_ns += 1000;
    batch[0].dumps.push_back(std::move(later));
    batch[0].dumps.push_back(dump_of(Reading{"earlier", 1, {}, {}, {}}));
    writer.submit(std::move(batch));
    writer.flush();
    auto lines = read_lines(path);
    REQUIRE(lines.size() == 2);
    CHECK(parse_dump_line(lines[0]).value().body_json.find("earlier") != std::string::npos);  // sorted by time
    CHECK(writer.stats().written == 2);

    std::filesystem::rename(path, path + ".1");  // logrotate moves the file away...
    writer.reopen();                             // ...and signals the dumper
    std::vector<dumping::DumpChunk> next(1);
    next[0].dumps.push_back(dump_of(Reading{"after rotation", 1, {}, {}, {}}));
    writer.submit(std::move(next));
    writer.flush();
    CHECK(read_lines(path + ".1").size() == 2);
    CHECK(read_lines(path).size() == 1);
    CHECK(writer.stats().reopened == 1);
  }
  {
    DumpFileWriter writer(dir.file("no-such-dir/app.dump"), 1, 64 * 1024);
    std::vector<dumping::DumpChunk> batch(1);  // one recording thread's chunk
    batch[0].dumps.push_back(dump_of(Reading{}));
    writer.submit(std::move(batch));
    writer.flush();
    auto stats = writer.stats();
    CHECK(stats.written == 0);
    CHECK(stats.lost == 1);
    CHECK_THAT(stats.last_error, Catch::Contains("no-such-dir/app.dump: cannot open the dump file: No such file"));
  }
}

TEST_CASE("the writer's line is the reference formatter's, byte for byte", "[dumper][format]") {
  // Random dumps with every kind of text and body, at every size limit, must come out of
  // append_dump_line as the plain reference formatter above makes them.
  static const std::size_t kLimits[] = {
      0, 1, 2, 3, 7, 16, 40, 100, 1000, 64 * 1024, std::numeric_limits<std::size_t>::max()};
  RandomDumps random(20261122);
  DumpLineScratch scratch;  // reused, as the writer does
  std::string line = "the line before\n";
  std::size_t cut = 0;
  std::size_t null_bodies = 0;
  for (int i = 0; i < 20'000; ++i) {
    const auto dump = random.dump();
    const auto node_no = static_cast<std::uint16_t>(random.any());
    const std::size_t max_body_size = random.chance(50) ? 64 * 1024 : kLimits[random.below(std::size(kLimits))];
    const std::string expected = reference::line(dump, node_no, max_body_size);
    line.resize(line.find('\n') + 1);
    append_dump_line(dump, node_no, max_body_size, scratch, line);
    INFO("dump " << i << ", body bytes " << Catch::Detail::stringify(*dump.encoded) << ", limit " << max_body_size);
    REQUIRE(line.substr(line.find('\n') + 1) == expected);
    // The record path (elfin dump --json) writes the same line.
    std::string from_record;
    append_json_line(to_record(dump, node_no, max_body_size), from_record);
    REQUIRE(from_record == expected);
    if (expected.find("…<truncated: ") != std::string::npos) ++cut;
    if (expected.find(R"("m":null)") != std::string::npos) ++null_bodies;
  }
  CHECK(cut > 1000);  // the cases the test means to cover did come up
  CHECK(null_bodies > 500);
}

TEST_CASE("a dump line with valid UTF-8 texts reads back", "[dumper][format]") {
  RandomDumps random(7);
  int parsed = 0;
  for (int i = 0; i < 2000; ++i) {
    auto dump = random.dump();
    std::string line = line_of(dump, 1, 64 * 1024);
    line.pop_back();
    auto record = parse_dump_line(line);
    // Group, key and names are written as they are: only lines whose texts are valid UTF-8 parse.
    if (record.ok()) {
      ++parsed;
      CHECK(record->ts == dump.timestamp_ns);
      CHECK(record->trace_id == dump.trace_id.raw());
    }
  }
  CHECK(parsed > 500);
}

TEST_CASE("a dump of a real message: Hidden fields stay hidden, the body is cut like any other", "[dumper][format]") {
  Reading reading{"t\"1\xff", -0.1, {1, -2}, {{"ok", true}, {"\n", false}}, std::string{"secret"}};
  const auto dump = dump_of(reading);
  for (std::size_t limit : {std::size_t{64 * 1024}, std::size_t{10}, std::size_t{0}}) {
    CHECK(line_of(dump, 3, limit) == reference::line(dump, 3, limit));
  }
  CHECK(line_of(dump, 3, 1024).find(R"("token":"<hidden>")") != std::string::npos);
}

TEST_CASE("a dumped UpdateConfig shows the config table, while the wire still carries its bytes", "[dumper][format]") {
  auto config = AnyConfig::from_toml("rounds = 5\n[limits]\nname = \"x\"\n");
  REQUIRE(config.ok());
  dumping::Dump d = dump_of(Reading{});
  d.vtable = &vtable_of<UpdateConfig>();
  d.message = Envelope::make(UpdateConfig{*config}, Addr{}, d.trace_id);
  CHECK(line_of(d, 1, 64 * 1024).find(R"("m":{"config":{"limits":{"name":"x"},"rounds":5}})") != std::string::npos);

  // Outside a dump the table travels as binary, and decodes back to itself.
  const std::string wire = pack(UpdateConfig{*config});
  const auto object = msgpack::unpack(wire.data(), wire.size());
  REQUIRE(object->type == msgpack::type::MAP);
  REQUIRE(object->via.map.size == 1);
  CHECK(object->via.map.ptr[0].val.type == msgpack::type::BIN);
  CHECK(object->as<UpdateConfig>().config == *config);
}

TEST_CASE("ordering by time merges sorted runs as a stable sort would", "[dumper][writer]") {
  std::mt19937_64 rng(42);
  auto below = [&](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
  std::vector<const dumping::Dump*> scratch;
  for (int round = 0; round < 300; ++round) {
    // A batch as a drain makes it: chunks each in time order (mostly), with many equal
    // timestamps, chunks of a thread following each other.
    std::vector<dumping::Dump> dumps(below(3000));
    const std::uint64_t chunk = 1 + below(500);
    std::uint64_t ts = 0;
    for (std::size_t i = 0; i < dumps.size(); ++i) {
      if (i % chunk == 0) ts = below(round % 3 == 0 ? 5 : 1000);  // a new chunk starts anywhere
      if (below(100) < 2) ts = below(1000);                       // rarely, time goes back inside one
      ts += below(3);                                             // ties often
      dumps[i].timestamp_ns = ts;
    }
    std::vector<const dumping::Dump*> order;
    for (const auto& d : dumps) order.push_back(&d);
    auto expected = order;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const dumping::Dump* a, const dumping::Dump* b) { return a->timestamp_ns < b->timestamp_ns; });
    order_by_time(order, scratch);
    REQUIRE(order == expected);  // the same pointers: ties in batch order
  }
  std::vector<const dumping::Dump*> empty;
  order_by_time(empty, scratch);
  CHECK(empty.empty());
  std::vector<dumping::Dump> backwards(5);  // every dump a run of its own
  for (std::size_t i = 0; i < backwards.size(); ++i) backwards[i].timestamp_ns = 10 - i;
  std::vector<const dumping::Dump*> order;
  for (const auto& d : backwards) order.push_back(&d);
  order_by_time(order, scratch);
  CHECK(order ==
        std::vector<const dumping::Dump*>{&backwards[4], &backwards[3], &backwards[2], &backwards[1], &backwards[0]});
}

TEST_CASE("the file writer writes a batch's lines in time order, in 128 KiB writes", "[dumper][writer]") {
  dumper::test::TempDir dir;
  const auto path = dir.file("batch.dump");
  RandomDumps random(99);
  std::vector<dumping::DumpChunk> batch(4);
  std::vector<dumping::Dump> copies;  // the expected lines come from these
  std::uint64_t ts = 1'795'341'600'000'000'000;
  for (int i = 0; i < 4000; ++i) {
    auto d = random.dump();
    d.timestamp_ns = ts + random.below(1'000);  // four threads' chunks, each in order, interleaved in time
    ts += random.below(3) * 500;
    dumping::Dump copy;
    copy.group = d.group;
    copy.key = d.key;
    copy.sequence_no = d.sequence_no;
    copy.timestamp_ns = d.timestamp_ns;
    copy.trace_id = d.trace_id;
    copy.thread_no = d.thread_no;
    copy.direction = d.direction;
    copy.kind = d.kind;
    copy.vtable = d.vtable;
    copy.encoded = std::make_unique<const std::string>(*d.encoded);
    copy.correlation_id = d.correlation_id;
    copies.push_back(std::move(copy));
    auto& chunk = batch[static_cast<std::size_t>(i) % batch.size()];
    if (!chunk.empty() && chunk.dumps.back().timestamp_ns > d.timestamp_ns)
      d.timestamp_ns = chunk.dumps.back().timestamp_ns;
    copies.back().timestamp_ns = d.timestamp_ns;
    chunk.dumps.push_back(std::move(d));
  }
  std::vector<const dumping::Dump*> expected_order;
  for (std::size_t c = 0; c < batch.size(); ++c) {
    for (std::size_t i = c; i < copies.size(); i += batch.size()) expected_order.push_back(&copies[i]);
  }
  std::stable_sort(expected_order.begin(), expected_order.end(),
                   [](const dumping::Dump* a, const dumping::Dump* b) { return a->timestamp_ns < b->timestamp_ns; });
  std::string expected;
  for (const auto* d : expected_order) expected += reference::line(*d, 5, 256);
  REQUIRE(expected.size() > 3 * 128 * 1024);  // several writes

  DumpFileWriter writer(path, 5, 256);
  writer.submit(std::move(batch));
  writer.flush();
  CHECK(writer.stats().written == copies.size());
  CHECK(read_file(path) == expected);
}
