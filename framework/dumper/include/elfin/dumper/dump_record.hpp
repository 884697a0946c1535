// DumpRecord: one line of a dump file — a message an actor received or sent.
//
// Dump files are newline-delimited JSON, one object per line, with the elfo book's short keys:
//
//   {"ts":1795341600123456789,"g":"counters","k":"42","n":1,"s":17,"t":7226239398017728512,"th":3,
//    "d":"In","mn":"Increment","mp":"counter","mk":"Regular","m":{"by":3}}
//
//   ts  unix time in nanoseconds         g   actor group        k   actor key (optional)
//   n   node number                      s   sequence number, per group; gaps mean dropped dumps
//   t   trace id                         th  thread that recorded the dump
//   d   "In" or "Out"                    cl  class (optional)
//   mn  message name                     mp  protocol           mk  "Regular", "Request" or "Response"
//   m   the message body as JSON (nullable; a string marked "<truncated ...>" when over the size limit)
//   c   correlation id linking a request and its response (optional)
//
// `ts` and `t` are 64-bit integers; jq before 1.7 rounds integers above 2^53, so filter by trace with
// `elfin dump --trace` rather than with jq on such versions.
//
// Thread safety: a plain value type; the functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <elfin/dumper/dump_read_error.hpp>
#include <elfin/result.hpp>

namespace elfin::dumper {

enum class Direction : std::uint8_t { In, Out };
enum class MessageKind : std::uint8_t { Regular, Request, Response };

[[nodiscard]] std::string_view to_string(Direction direction);
[[nodiscard]] std::string_view to_string(MessageKind kind);

struct DumpRecord {
  std::uint64_t ts = 0;
  std::string group;
  std::optional<std::string> key;
  std::uint16_t node_no = 0;
  std::uint64_t sequence_no = 0;
  std::uint64_t trace_id = 0;
  std::uint64_t thread = 0;
  Direction direction = Direction::In;
  std::optional<std::string> class_name;
  std::string message_name;
  std::string protocol;
  MessageKind kind = MessageKind::Regular;
  std::string body_json = "null";  // JSON text of `m`
  std::optional<std::uint64_t> correlation_id;

  friend bool operator==(const DumpRecord&, const DumpRecord&) = default;
};

/// Appends `record` as one JSON object and a newline to `out`.
void append_json_line(const DumpRecord& record, std::string& out);
/// Parses one line; the error says which field is missing or has the wrong type.
[[nodiscard]] Result<DumpRecord, DumpReadError> parse_dump_line(std::string_view line);

/// Appends `text` as a JSON string literal (quoted, escaped) to `out`.
void append_json_string(std::string_view text, std::string& out);

}  // namespace elfin::dumper
