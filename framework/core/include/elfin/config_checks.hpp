// ConfigChecks: what a group's `validate(config, section)` found wrong with values the types
// alone accept (a zero timeout, a name that does not parse), one line per problem, each starting
// with where the key was written ("manager.toml:12: ") when the section knows it. The configurer
// shows these lines when a node starts or a reload is refused.
//
//   ConfigChecks checks(section);
//   checks.positive({{"ping_timeout", config.ping_timeout}, {"send_timeout", config.send_timeout}});
//   if (config.version.empty()) checks.add("version", "must not be empty");
//   return std::move(checks).problems();
//
// Thread safety: a local value; borrows `section` for its lifetime.
#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/config.hpp>

namespace elfin {

class ConfigChecks {
 public:
  /// A duration key and its value, for `positive`.
  using Duration = std::pair<std::string_view, std::chrono::milliseconds>;

  explicit ConfigChecks(const AnyConfig& section) : section_(section) {}

  /// `key` (a dotted path in the section) is wrong: `what` says how.
  void add(std::string_view key, std::string_view what) {
    problems_.push_back(fmt::format("{}{}: {}", section_.where(key), key, what));
  }

  /// Each of `durations` must be above zero.
  void positive(std::initializer_list<Duration> durations) {
    for (const auto& [key, value] : durations) {
      if (value.count() <= 0) add(key, fmt::format("must be positive, got {} ms", value.count()));
    }
  }

  /// `key` lists node numbers: not empty (`required` says what the list is for), no 0, none twice.
  template <class Int>
  void node_numbers(std::string_view key, const std::vector<Int>& nodes, std::string_view required) {
    if (nodes.empty()) add(key, fmt::format("required ({})", required));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] == 0) add(key, "0 is not a node number");
      for (std::size_t j = 0; j < i; ++j) {
        if (nodes[j] == nodes[i] && nodes[i] != 0) add(key, fmt::format("node {} is listed twice", nodes[i]));
      }
    }
  }

  /// Every problem found, in the order found; empty: the config is fine.
  [[nodiscard]] std::vector<std::string> problems() && { return std::move(problems_); }

 private:
  const AnyConfig& section_;
  std::vector<std::string> problems_;
};

/// The answer a group gives to ValidateConfig (elfin/messages.hpp) for a section of its `Config`:
/// empty when it decodes and `validate(config, section)` (found by argument-dependent lookup, next
/// to the config type) has no objection; otherwise the decoding error or the problems, one per line.
template <class Config>
[[nodiscard]] std::string config_verdict(const AnyConfig& section) {
  auto config = section.decode<Config>();
  if (!config) return config.error().message();
  return fmt::format("{}", fmt::join(validate(*config, section), "\n"));
}

}  // namespace elfin
