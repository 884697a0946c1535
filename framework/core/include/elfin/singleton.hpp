// Singleton: the key type of a group with exactly one actor. It prints as `_`.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>

#include <fmt/format.h>

namespace elfin {

struct Singleton {
  friend bool operator==(Singleton, Singleton) { return true; }
  friend std::ostream& operator<<(std::ostream& os, Singleton) { return os << '_'; }
};

}  // namespace elfin

template <>
struct std::hash<elfin::Singleton> {
  std::size_t operator()(elfin::Singleton) const noexcept { return 0; }
};

template <>
struct fmt::formatter<elfin::Singleton> : fmt::formatter<std::string_view> {
  auto format(elfin::Singleton, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format("_", ctx);
  }
};
