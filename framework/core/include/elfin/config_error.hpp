// ConfigError: a config that cannot be read, parsed or decoded, as a value a program can branch on.
//
// `message()` is the text a person reads ("app.toml:3: counters.step: expected a non-negative
// integer, got a string"); the fields say the same for a program: what kind of problem, the file,
// line and column where it was written (when known) and the dotted key path it concerns
// ("system.restart_policy.when"), relative to the table that was decoded. When decoding finds
// several problems, the fields describe the first and `message()` lists them all.
//
// Values such as durations, sizes and log levels (`parse_duration`, `parse_size`,
// `parse_log_level`) fail with a ConfigError of kind Invalid that carries no location: the caller
// knows the key.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <elfin/detail/error_formatter.hpp>

namespace elfin {

class ConfigError {
 public:
  using elfin_error = void;

  /// Unscoped on purpose: `error.kind() == ConfigError::Syntax` reads as the kind it compares.
  enum Kind : std::uint8_t {
    Unreadable,   ///< the file could not be read
    Syntax,       ///< not valid TOML (line and column say where)
    Invalid,      ///< a value does not fit its key, or a required key is missing
    NoSuchGroup,  ///< the config was addressed to a group the system does not have
  };

  ConfigError(Kind kind, std::string message) : message_(std::move(message)), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// The full text: where, which key, what is wrong.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// The file (or the source name given to `from_toml`); empty if unknown.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// 1-based; 0 if unknown.
  [[nodiscard]] std::uint32_t line() const noexcept { return line_; }
  /// 1-based, for syntax errors; 0 if unknown.
  [[nodiscard]] std::uint32_t column() const noexcept { return column_; }
  /// The dotted path of the key ("workers.step", "system.dumping.max_rate"); empty when the
  /// problem is not about one key.
  [[nodiscard]] const std::string& key_path() const noexcept { return key_path_; }

  ConfigError& at(std::string source, std::uint32_t line, std::uint32_t column = 0) & {
    source_ = std::move(source);
    line_ = line;
    column_ = column;
    return *this;
  }
  ConfigError&& at(std::string source, std::uint32_t line, std::uint32_t column = 0) && {
    return std::move(at(std::move(source), line, column));
  }
  ConfigError& key(std::string key_path) & {
    key_path_ = std::move(key_path);
    return *this;
  }
  ConfigError&& key(std::string key_path) && { return std::move(key(std::move(key_path))); }
  /// The same problem seen from an enclosing table: `key_path` becomes "<prefix>.<key_path>" and
  /// the text `text` (the enclosing table's wording).
  [[nodiscard]] ConfigError nested(std::string_view prefix, std::string text) const;

 private:
  std::string message_;
  std::string source_;
  std::string key_path_;
  std::uint32_t line_ = 0;
  std::uint32_t column_ = 0;
  Kind kind_;
};

}  // namespace elfin
