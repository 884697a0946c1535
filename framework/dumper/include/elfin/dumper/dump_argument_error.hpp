// DumpArgumentError: a command-line argument of `elfin dump` (or a filter value) that is not valid.
//
// `message()` is the text printed to the user ("invalid trace id \"x\": expected a decimal
// number as printed in logs and dumps"); `option()` names the option it belongs to ("--trace"),
// empty when the problem is not one option's (no file given) or when a value was parsed alone.
//
// Thread safety: a plain value type.
#pragma once

#include <string>
#include <utility>

#include <elfin/detail/error_formatter.hpp>

namespace elfin::dumper {

class DumpArgumentError {
 public:
  using elfin_error = void;

  explicit DumpArgumentError(std::string message, std::string option = {})
      : message_(std::move(message)), option_(std::move(option)) {}

  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] const std::string& option() const noexcept { return option_; }

 private:
  std::string message_;
  std::string option_;
};

}  // namespace elfin::dumper
