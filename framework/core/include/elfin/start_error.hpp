// StartError: why `System::start` (or `System::check`) refused a topology and its configs.
//
// Every check runs before anything starts, and all problems are reported at once: `message()` is
// "cannot start the system:" followed by one line per problem, `problems()` the same lines one by
// one. When the config document itself could not be read or parsed, `config_error()` holds that
// ConfigError (file, line, column) for a program to act on.
//
// Thread safety: a plain value type.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <elfin/config_error.hpp>
#include <elfin/detail/error_formatter.hpp>

namespace elfin {

class StartError {
 public:
  using elfin_error = void;

  explicit StartError(std::vector<std::string> problems, std::optional<ConfigError> config_error = std::nullopt);

  /// "cannot start the system:\n  - <problem>\n  - ...".
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Each problem: messages, topology, config values (each naming file, line, group and key).
  [[nodiscard]] const std::vector<std::string>& problems() const noexcept { return problems_; }
  /// The config document could not be read or is not valid TOML.
  [[nodiscard]] const std::optional<ConfigError>& config_error() const noexcept { return config_error_; }

 private:
  std::string message_;
  std::vector<std::string> problems_;
  std::optional<ConfigError> config_error_;
};

}  // namespace elfin
