// TopologyError: a topology that cannot be read, parsed or built, as a value a program can branch on.
//
// `message()` is the text a person reads: for an invalid topology file, the file followed by one
// line per mistake ("node.toml: the topology is not valid:\n  - node.toml:7: route to unknown
// group `pongers`"). `problems()` holds the same mistakes one by one with their line, so a tool
// can point at each; `kind()` says what went wrong at all.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <elfin/detail/error_formatter.hpp>

namespace elfin {

class TopologyError {
 public:
  using elfin_error = void;

  /// Unscoped on purpose: `error.kind() == TopologyError::Invalid` reads as the kind it compares.
  enum Kind : std::uint8_t {
    Unreadable,     ///< the file could not be read
    Syntax,         ///< not valid TOML (line and column say where)
    Invalid,        ///< valid TOML that does not describe a valid topology (see problems())
    BlueprintName,  ///< BlueprintRegistry::add: the name is empty or already registered
  };

  /// One mistake in a topology file.
  struct Problem {
    std::uint32_t line = 0;  ///< 1-based; 0 if unknown
    std::string text;        ///< "node.toml:7: route to unknown group `pongers`"
  };

  TopologyError(Kind kind, std::string message, std::string source = {}, std::vector<Problem> problems = {})
      : message_(std::move(message)), source_(std::move(source)), problems_(std::move(problems)), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// The full text.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// The file (or source name); empty for BlueprintName.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  /// Where a Syntax error is (1-based; 0 otherwise).
  [[nodiscard]] std::uint32_t line() const noexcept { return line_; }
  [[nodiscard]] std::uint32_t column() const noexcept { return column_; }
  /// Each mistake of an Invalid topology, in file order as found.
  [[nodiscard]] const std::vector<Problem>& problems() const noexcept { return problems_; }

  TopologyError&& at(std::uint32_t line, std::uint32_t column) && {
    line_ = line;
    column_ = column;
    return std::move(*this);
  }

 private:
  std::string message_;
  std::string source_;
  std::vector<Problem> problems_;
  std::uint32_t line_ = 0;
  std::uint32_t column_ = 0;
  Kind kind_;
};

}  // namespace elfin
