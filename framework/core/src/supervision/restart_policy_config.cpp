#include "supervision/restart_policy_config.hpp"

#include <charconv>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace elfin::detail {

namespace {

std::string_view text_of(const msgpack::object& o) { return {o.via.str.ptr, o.via.str.size}; }

std::chrono::nanoseconds duration_of(const msgpack::object& o) {
  if (o.type != msgpack::type::STR) throw std::invalid_argument{"expected a duration string such as \"5s\""};
  auto parsed = parse_duration(text_of(o));
  if (!parsed) throw std::invalid_argument{parsed.error().message()};
  return *parsed;
}

double number_of(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return o.via.f64;
    case msgpack::type::POSITIVE_INTEGER:
      return static_cast<double>(o.via.u64);
    case msgpack::type::STR: {
      const std::string_view text = text_of(o);
      double value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc{} && end == text.data() + text.size()) return value;
      break;
    }
    default:
      break;
  }
  throw std::invalid_argument{"expected a positive number such as 2.0"};
}

std::uint64_t count_of(const msgpack::object& o) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) return o.via.u64;
  if (o.type == msgpack::type::STR) {
    const std::string_view text = text_of(o);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc{} && end == text.data() + text.size()) return value;
  }
  throw std::invalid_argument{"expected a non-negative integer such as 20"};
}

/// A problem with `system.restart_policy.<key>`, the key path relative to the group's section.
ConfigError invalid(std::string_view key, std::string text) {
  return ConfigError(ConfigError::Invalid, std::move(text)).key(fmt::format("system.restart_policy.{}", key));
}

}  // namespace

Result<std::optional<RestartPolicy>, ConfigError> decode_restart_policy(const AnyConfig& group_section) {
  using Decoded = std::optional<RestartPolicy>;
  const AnyConfig table = group_section.section("system.restart_policy");
  if (table.empty()) return Decoded{};

  std::optional<std::string> when;
  std::optional<std::chrono::nanoseconds> min_backoff, max_backoff, auto_reset;
  std::optional<double> factor;
  std::optional<std::uint64_t> max_retries;

  auto handle = msgpack::unpack(table.msgpack().data(), table.msgpack().size());
  const msgpack::object& map = handle.get();
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    const auto& [key_object, value] = map.via.map.ptr[i];
    const std::string key = key_object.type == msgpack::type::STR ? std::string(text_of(key_object)) : "?";
    try {
      if (key == "when") {
        if (value.type != msgpack::type::STR) throw std::invalid_argument{"expected a string"};
        when = std::string(text_of(value));
      } else if (key == "min_backoff") {
        min_backoff = duration_of(value);
      } else if (key == "max_backoff") {
        max_backoff = duration_of(value);
      } else if (key == "auto_reset") {
        auto_reset = duration_of(value);
      } else if (key == "factor") {
        factor = number_of(value);
        if (!(*factor > 0)) throw std::invalid_argument{"expected a positive number such as 2.0"};
      } else if (key == "max_retries") {
        max_retries = count_of(value);
      } else {
        throw std::invalid_argument{
            "unknown key (known: when, min_backoff, max_backoff, factor, max_retries, auto_reset)"};
      }
    } catch (const std::exception& e) {
      return Err{invalid(key, fmt::format("system.restart_policy.{}: {}", key, e.what()))};
    }
  }

  if (!when)
    return Err{invalid("when", "system.restart_policy.when: required (\"Always\", \"OnFailure\" or \"Never\")")};
  if (*when == "Never") return Decoded{RestartPolicy::never()};
  if (*when != "Always" && *when != "OnFailure") {
    return Err{invalid(
        "when",
        fmt::format("system.restart_policy.when: expected \"Always\", \"OnFailure\" or \"Never\", got \"{}\"", *when))};
  }
  for (auto [name, value] : {std::pair{"min_backoff", &min_backoff}, std::pair{"max_backoff", &max_backoff}}) {
    if (!*value) {
      return Err{invalid(name, fmt::format("system.restart_policy.{}: required when `when = \"{}\"`", name, *when))};
    }
  }
  RestartParams params{*min_backoff, *max_backoff};
  if (factor) params = params.factor(*factor);
  if (max_retries) params = params.max_retries(*max_retries);
  if (auto_reset) params = params.auto_reset(*auto_reset);
  return Decoded{*when == "Always" ? RestartPolicy::always(params) : RestartPolicy::on_failure(params)};
}

}  // namespace elfin::detail
