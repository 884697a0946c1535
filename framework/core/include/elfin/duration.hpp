// Durations and sizes as people write them in config files: "500ms", "5s", "1m 30s", "64KiB".
//
// A config struct may hold any `std::chrono::duration` or a `ByteSize`; the adaptors at the end of
// this header decode them from such strings (a size may also be a plain integer of bytes). A
// duration must be a string: a bare number would leave the unit to guesswork.
//
//   struct Config {
//     std::chrono::milliseconds flush_every{500};
//     elfin::ByteSize max_frame{64 * 1024};
//     ELFIN_CONFIG(flush_every, max_frame);
//   };
//   // [writer]
//   // flush_every = "2s"
//   // max_frame = "1MiB"
//
// Thread safety: pure functions and value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include <elfin/config_error.hpp>
#include <elfin/result.hpp>

namespace elfin {

/// Parses one or more `<number><unit>` parts ("1h 30m", "1.5s"); units: ns, us, ms, s, m, min, h, d.
[[nodiscard]] Result<std::chrono::nanoseconds, ConfigError> parse_duration(std::string_view text);
/// The shortest exact text for `d` that parse_duration reads back: "500ms", "1m 30s", "0s".
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds d);

/// A number of bytes, written in config files as "4096", "64KiB", "1.5MB" (KB = 1000, KiB = 1024).
struct ByteSize {
  std::uint64_t bytes = 0;
  friend bool operator==(ByteSize, ByteSize) = default;
};
[[nodiscard]] Result<ByteSize, ConfigError> parse_size(std::string_view text);

}  // namespace elfin

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  template <class Rep, class Period>
  struct convert<std::chrono::duration<Rep, Period>> {
    const msgpack::object& operator()(const msgpack::object& o, std::chrono::duration<Rep, Period>& out) const {
      if (o.type != msgpack::type::STR) {
        throw std::invalid_argument{"expected a duration string such as \"500ms\" or \"5s\""};
      }
      auto parsed = elfin::parse_duration(std::string_view{o.via.str.ptr, o.via.str.size});
      if (!parsed) throw std::invalid_argument{parsed.error().message()};
      out = std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(*parsed);
      return o;  // NOLINT(bugprone-return-const-ref-from-parameter): msgpack-c's adaptor contract
    }
  };

  template <class Rep, class Period>
  struct pack<std::chrono::duration<Rep, Period>> {
    template <class Stream>
    msgpack::packer<Stream>& operator()(msgpack::packer<Stream>& pk,
                                        const std::chrono::duration<Rep, Period>& d) const {
      pk.pack(elfin::format_duration(std::chrono::duration_cast<std::chrono::nanoseconds>(d)));
      return pk;
    }
  };

  template <>
  struct convert<elfin::ByteSize> {
    const msgpack::object& operator()(const msgpack::object& o, elfin::ByteSize& out) const {
      if (o.type == msgpack::type::POSITIVE_INTEGER) {
        out.bytes = o.via.u64;
        return o;  // NOLINT(bugprone-return-const-ref-from-parameter): msgpack-c's adaptor contract
      }
      if (o.type != msgpack::type::STR) throw std::invalid_argument{"expected a size such as 4096 or \"64KiB\""};
      auto parsed = elfin::parse_size(std::string_view{o.via.str.ptr, o.via.str.size});
      if (!parsed) throw std::invalid_argument{parsed.error().message()};
      out = *parsed;
      return o;  // NOLINT(bugprone-return-const-ref-from-parameter): msgpack-c's adaptor contract
    }
  };

  template <>
  struct pack<elfin::ByteSize> {
    template <class Stream>
    msgpack::packer<Stream>& operator()(msgpack::packer<Stream>& pk, elfin::ByteSize size) const {
      pk.pack(size.bytes);
      return pk;
    }
  };

  }  // namespace adaptor
}
}  // namespace msgpack
