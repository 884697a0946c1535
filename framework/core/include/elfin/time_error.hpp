// TimeError: why `System::advance_time` (virtual time) could not move the clock.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <elfin/detail/error_formatter.hpp>

namespace elfin {

class TimeError {
 public:
  using elfin_error = void;

  /// Unscoped on purpose: `error.kind() == TimeError::NotSettled` reads as the kind it compares.
  enum Kind : std::uint8_t {
    RealTime,    ///< the system runs in real time (StartOptions::virtual_time is off)
    Backwards,   ///< a negative step
    NotSettled,  ///< actors were still queued or running when the settle timeout ran out
  };

  TimeError(Kind kind, std::string message) : message_(std::move(message)), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  std::string message_;
  Kind kind_;
};

}  // namespace elfin
