// Printing elfin's typed errors: every error type a user handles (ConfigError, TopologyError,
// StartError, TimeError, DecodeError, the dumper's DumpReadError) has `message()`, the full text a
// person reads, and says so with `using elfin_error = void;`. This formatter lets
// `fmt::format("{}", error)` print that text, so code that printed a string keeps reading well.
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace elfin::detail {

template <class E>
concept TypedError = requires(const E& e) {
  typename E::elfin_error;
  { e.message() } -> std::convertible_to<std::string_view>;
};

}  // namespace elfin::detail

template <elfin::detail::TypedError E>
struct fmt::formatter<E> : fmt::formatter<std::string_view> {
  auto format(const E& e, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(e.message()), ctx);
  }
};
