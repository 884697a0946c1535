// Whether the calling thread is encoding a message body for a dump (elfin/dumping.hpp's
// DumpEncodingScope sets it): a type may then encode itself for people rather than for the wire,
// as Hidden<T> shows "<hidden>" and AnyConfig its table instead of its bytes. A header of its own
// so that types below dumping.hpp (config.hpp) can ask.
#pragma once

namespace elfin::detail {

inline thread_local bool t_encoding_for_dump = false;

}  // namespace elfin::detail

namespace elfin::dumping {

/// True while this thread encodes a message body for a dump.
[[nodiscard]] inline bool encoding_for_dump() { return elfin::detail::t_encoding_for_dump; }

}  // namespace elfin::dumping
