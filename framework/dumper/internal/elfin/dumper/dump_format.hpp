// Turning recorded dumps into dump-file lines: the message body goes from msgpack to JSON, and a
// body longer than the size limit is cut and marked.
//
// msgpack maps onto JSON as serde would: nil → null, binary → array of bytes, extension →
// {"ext": type, "data": [bytes]}, a non-string map key → its JSON text as the key, NaN/±inf → null.
// Strings that are not valid UTF-8 get U+FFFD for the bad bytes, so every line stays valid JSON.
// Bytes that do not decode (cut short, an unused type byte, nesting deeper than kMaxBodyNesting)
// make the whole body `null`.
//
// The file writer formats millions of dumps a second with `append_dump_line`: the body is encoded
// into a reused string and its msgpack read straight into the line's JSON (no msgpack::object, no
// zone), so a line costs no allocation once the buffers have grown.
//
// Thread safety: pure functions; a DumpLineScratch belongs to one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <elfin/dumper/dump_record.hpp>
#include <elfin/dumping.hpp>
#include <elfin/internal/dump_storage.hpp>

namespace elfin::dumper {

/// Containers (arrays, maps) nested deeper than this make a body `null`: the JSON converter
/// recurses, and a message's own depth is nowhere near it.
inline constexpr std::size_t kMaxBodyNesting = 100;

/// The JSON text of msgpack `bytes` (the first object; bytes after it are ignored); `null` if they
/// do not decode.
[[nodiscard]] std::string msgpack_to_json(std::string_view bytes);

/// A body over `max_size` bytes of JSON becomes a JSON string holding its start (cut at a character
/// boundary) and the marker `…<truncated: N bytes>`.
[[nodiscard]] std::string truncate_body(std::string json, std::size_t max_size);

/// The JSON of texts that recur from line to line (a group's name; a message type's name and
/// protocol), escaped once. An entry is found by the address of what it was made from and then
/// checked against that text: an address may come to hold another text (a freed string's).
class RecurringJson {
 public:
  /// `,"g":<group>` for `group`.
  [[nodiscard]] std::string_view group(const std::string& group);
  /// `,"mn":<name>,"mp":<protocol>` for `vtable`.
  [[nodiscard]] std::string_view message(const MessageVTable& vtable);

 private:
  struct Entry {
    const void* source = nullptr;
    std::string first;   // the text(s) the JSON was made from
    std::string second;  //
    std::string json;
  };
  static constexpr std::size_t kEntries = 64;  // direct-mapped by address: a node has few groups and types
  [[nodiscard]] static std::size_t slot(const void* source) {
    return (reinterpret_cast<std::uintptr_t>(source) >> 4) % kEntries;
  }
  std::array<Entry, kEntries> groups_;
  std::array<Entry, kEntries> messages_;
};

/// The memory `append_dump_line` reuses from one dump to the next.
struct DumpLineScratch {
  std::string body;  ///< the body's msgpack
  std::string text;  ///< JSON being rewritten: a non-string map key, the start of a cut body
  RecurringJson recurring;
};

/// Appends the dump-file line of `dump` (one JSON object and a newline, as `append_json_line`
/// writes its record) to `line`: what the file writer does for every dump. `line` may hold text
/// already; `scratch` is best kept from one call to the next.
void append_dump_line(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size,
                      DumpLineScratch& scratch, std::string& line);

/// The dump-file record of a recorded dump (what `append_dump_line` writes, as a value).
[[nodiscard]] DumpRecord to_record(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size);

}  // namespace elfin::dumper
