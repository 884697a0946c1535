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
// elfin already speaks), plus where each key was written (file and line), so a value that does
// not fit names its file, line, key path and the type that was expected. The `system` sub-table
// holds keys the runtime itself reads (`system.mailbox.capacity`, see system_config.hpp);
// `[common]` is merged into every group's section (`for_group`).
//
// Keys a config struct does not know are warnings, not errors: `[common]` is shared by groups
// with different structs, and an old binary must accept a newer config. `elfin check --strict`
// turns them into errors.
//
// Thread safety: AnyConfig is an immutable value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <msgpack.hpp>

#include <elfin/config_error.hpp>
#include <elfin/detail/dump_encoding.hpp>
#include <elfin/duration.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>

#define ELFIN_DETAIL_FIELDS_1(...) MSGPACK_DEFINE_MAP_IMPL(__VA_ARGS__)
#define ELFIN_DETAIL_FIELDS_(...) ()
#define ELFIN_DETAIL_FIELDS(...) ELFIN_DETAIL_CAT(ELFIN_DETAIL_FIELDS_, ELFIN_DETAIL_HAS_ARGS(__VA_ARGS__))(__VA_ARGS__)

/// Lists a config struct's keys: `ELFIN_CONFIG(step, limit);`
#define ELFIN_CONFIG(...)                                                                                  \
  ELFIN_DETAIL_MAP(__VA_ARGS__)                                                                            \
  auto elfin_config_fields() { return ::msgpack::type::make_define_map ELFIN_DETAIL_FIELDS(__VA_ARGS__); } \
  using elfin_config_keys = void

namespace elfin {

/// The config of groups that take none.
struct NoConfig {
  ELFIN_CONFIG();
};

/// Where a config key was written.
struct ConfigLocation {
  std::string source;      ///< file name (or "<config>")
  std::uint32_t line = 0;  ///< 1-based; 0 if unknown
  bool inherited = false;  ///< came from `[common]`
};

/// What checking a config found: errors stop it from being applied, warnings do not.
struct ConfigReport {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  [[nodiscard]] bool ok() const { return errors.empty(); }
  void append(ConfigReport other);
};

class AnyConfig {
 public:
  using Locations = std::map<std::string, ConfigLocation, std::less<>>;

  /// An empty table.
  AnyConfig();
  /// Parses a TOML document; the error names the source, line and column.
  [[nodiscard]] static Result<AnyConfig, ConfigError> from_toml(std::string_view toml,
                                                                std::string_view source = "<config>");
  /// Reads and parses a TOML file; the error names the file.
  [[nodiscard]] static Result<AnyConfig, ConfigError> from_file(const std::string& path);
  /// Copies a msgpack map.
  [[nodiscard]] static AnyConfig from_object(const msgpack::object& map);

  /// This table placed under `key`: `{key = <this>}`.
  [[nodiscard]] AnyConfig nested_under(std::string_view key) const;
  /// The sub-table at a dotted path ("counters", "system.loggers"); empty if absent.
  [[nodiscard]] AnyConfig section(std::string_view dotted_path) const;
  /// A group's section with `[common]` merged under it (the group's own keys win, tables merge deeply).
  [[nodiscard]] AnyConfig for_group(std::string_view group) const;
  /// This table with `defaults` merged under it (keys of this table win, tables merge deeply).
  [[nodiscard]] AnyConfig merged_over(const AnyConfig& defaults) const;
  [[nodiscard]] bool empty() const;
  /// The keys of this table (top level).
  [[nodiscard]] std::vector<std::string> keys() const;
  [[nodiscard]] const std::string& msgpack() const { return *bytes_; }

  /// Where the key at `dotted_path` (relative to this table) was written, if known.
  [[nodiscard]] const ConfigLocation* location(std::string_view dotted_path) const;
  /// "file:line: " for a key, or "file: " if only the file is known, or "".
  [[nodiscard]] std::string where(std::string_view dotted_path) const;

  /// Decodes into `C`, keeping `C`'s defaults for absent keys. The error says what did not fit
  /// (file, line, key path, expected type); unknown keys are ignored here.
  template <class C>
  [[nodiscard]] Result<C, ConfigError> decode() const;

  /// Decodes into `C`, adding every problem to `report`: values that do not fit are errors,
  /// unknown keys warnings. `scope` prefixes each key ("[counters] "). In a group's section the
  /// `system` key belongs to the runtime (`group_section`), not to `C`.
  template <class C>
  [[nodiscard]] C decode_reporting(ConfigReport& report, std::string_view scope, bool group_section = false) const;

  /// `system.mailbox.capacity` if the section sets it.
  [[nodiscard]] std::optional<std::size_t> mailbox_capacity() const;

  /// Equal content; where the keys were written does not matter.
  friend bool operator==(const AnyConfig& a, const AnyConfig& b) { return *a.bytes_ == *b.bytes_; }

  /// On the wire: the table's msgpack as binary. In a dump: the table itself, so that dumps of
  /// UpdateConfig show `{"config":{"rounds":5}}` rather than its bytes as numbers.
  template <class Packer>
  void msgpack_pack(Packer& pk) const {
    const auto size = static_cast<std::uint32_t>(bytes_->size());
    if (!dumping::encoding_for_dump()) pk.pack_bin(size);
    pk.pack_bin_body(bytes_->data(), size);  // appends the bytes as they are: in a dump, the map
  }
  void msgpack_unpack(const msgpack::object& o);

 private:
  explicit AnyConfig(std::shared_ptr<const std::string> bytes, std::shared_ptr<const Locations> locations = {})
      : bytes_(std::move(bytes)), locations_(std::move(locations)) {}
  std::shared_ptr<const std::string> bytes_;
  std::shared_ptr<const Locations> locations_;  // may be null: built in code or received as a message
};

}  // namespace elfin

#include <elfin/impl/config_decode.hpp>
