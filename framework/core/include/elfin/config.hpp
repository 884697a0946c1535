// Configs: every group has a typed config struct, decoded from a TOML section.
//
// A config struct lists its keys with ELFIN_CONFIG, like a message lists its fields; members keep
// their defaults when the section leaves them out:
//
//   struct Config {
//     std::uint32_t step = 1;   // added per Increment
//     ELFIN_CONFIG(step);
//   };
//   // [counters]
//   // step = 20
//
// AnyConfig is a group's section before decoding (held as msgpack, the format every part of
// elfin already speaks). The `system` sub-table holds keys the runtime itself reads, e.g.
// `system.mailbox.capacity`.
//
// Thread safety: AnyConfig is an immutable value type.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include <elfin/duration.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace elfin {

/// Lists a config struct's keys: `ELFIN_CONFIG(step, limit);`
#define ELFIN_CONFIG(...)       \
  ELFIN_DETAIL_MAP(__VA_ARGS__) \
  using elfin_config_keys = void

/// The config of groups that take none.
struct NoConfig {
  ELFIN_CONFIG();
};

class AnyConfig {
 public:
  /// An empty table.
  AnyConfig();
  /// Parses a TOML document; the error names the line and column.
  [[nodiscard]] static Result<AnyConfig, std::string> from_toml(std::string_view toml,
                                                                std::string_view source = "<config>");
  /// Wraps the msgpack encoding of a map.
  [[nodiscard]] static AnyConfig from_msgpack(std::string bytes);

  /// This table placed under `key`: `{key = <this>}`.
  [[nodiscard]] AnyConfig nested_under(std::string_view key) const;
  /// The sub-table at a dotted path ("counters", "system.loggers"); empty if absent.
  [[nodiscard]] AnyConfig section(std::string_view dotted_path) const;
  [[nodiscard]] bool empty() const;
  [[nodiscard]] const std::string& msgpack() const { return *bytes_; }

  /// Decodes into `C`, keeping `C`'s defaults for absent keys. The error says what did not fit.
  template <class C>
  [[nodiscard]] Result<C, std::string> decode() const {
    C config{};
    try {
      auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
      handle.get().convert(config);
    } catch (const std::exception& e) {
      return Err{describe_decode_error(e)};
    }
    return config;
  }

  /// `system.mailbox.capacity` if the section sets it.
  [[nodiscard]] std::optional<std::size_t> mailbox_capacity() const;

  friend bool operator==(const AnyConfig& a, const AnyConfig& b) { return *a.bytes_ == *b.bytes_; }

  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    pk.pack_bin(static_cast<std::uint32_t>(bytes_->size()));
    pk.pack_bin_body(bytes_->data(), static_cast<std::uint32_t>(bytes_->size()));
  }
  void msgpack_unpack(const msgpack::object& o);

 private:
  explicit AnyConfig(std::shared_ptr<const std::string> bytes) : bytes_(std::move(bytes)) {}
  [[nodiscard]] std::string describe_decode_error(const std::exception& e) const;
  std::shared_ptr<const std::string> bytes_;
};

}  // namespace elfin
