#include <elfin/dumper/dump_record.hpp>

#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

void append_json_string(std::string_view text, std::string& out) {
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

void append_json_line(const DumpRecord& r, std::string& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"ts\":{},\"g\":", r.ts);
  append_json_string(r.group, out);
  if (r.key) {
    out += ",\"k\":";
    append_json_string(*r.key, out);
  }
  fmt::format_to(it, ",\"n\":{},\"s\":{},\"t\":{},\"th\":{},\"d\":\"{}\"", r.node_no, r.sequence_no, r.trace_id,
                 r.thread, to_string(r.direction));
  if (r.class_name) {
    out += ",\"cl\":";
    append_json_string(*r.class_name, out);
  }
  out += ",\"mn\":";
  append_json_string(r.message_name, out);
  out += ",\"mp\":";
  append_json_string(r.protocol, out);
  fmt::format_to(it, ",\"mk\":\"{}\",\"m\":", to_string(r.kind));
  out += r.body_json.empty() ? std::string_view{"null"} : std::string_view{r.body_json};
  if (r.correlation_id) fmt::format_to(it, ",\"c\":{}", *r.correlation_id);
  out += "}\n";
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

Result<DumpRecord, std::string> parse_dump_line(std::string_view line) {
  Json object = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return Err{std::string{"not valid JSON"}};
  if (!object.is_object()) return Err{std::string{"not a JSON object"}};

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
  if (!read.error().empty()) return Err{read.error()};
  return r;
}

}  // namespace elfin::dumper
