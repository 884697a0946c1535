// Turning recorded dumps into dump-file lines: the message body goes from msgpack to JSON, and a
// body longer than the size limit is cut and marked.
//
// msgpack maps onto JSON as serde would: nil → null, binary → array of bytes, extension →
// {"ext": type, "data": [bytes]}, a non-string map key → its JSON text as the key, NaN/±inf → null.
// Strings that are not valid UTF-8 get U+FFFD for the bad bytes, so every line stays valid JSON.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include <elfin/dumper/dump_record.hpp>
#include <elfin/dumping.hpp>

namespace elfin::dumper {

/// Appends `object` as JSON.
void append_msgpack_as_json(const msgpack::object& object, std::string& out);
/// The JSON text of msgpack `bytes`; `null` if they do not decode.
[[nodiscard]] std::string msgpack_to_json(std::string_view bytes);

/// A body over `max_size` bytes of JSON becomes a JSON string holding its start and the marker
/// `…<truncated: N bytes>`.
[[nodiscard]] std::string truncate_body(std::string json, std::size_t max_size);

/// The dump-file record of a recorded dump.
[[nodiscard]] DumpRecord to_record(const dumping::Dump& dump, std::uint16_t node_no, std::size_t max_body_size);

}  // namespace elfin::dumper
