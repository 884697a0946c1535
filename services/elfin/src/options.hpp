// Options: the `--name VALUE` / `--name=VALUE` reading every `elfin` subcommand shares, so each
// command's parser only says which options it has and what they mean, and every command words its
// usage errors the same way ("--timeout `x`: expected an integer from 1 to 3600").
//
//   Options options(args);
//   while (options.next()) {
//     bool ok = true;
//     if (options.is("--dir")) ok = options.read(parsed.dir);
//     else if (options.is("--count")) ok = options.read(parsed.count, 1u, 1000u);
//     else if (options.positional()) parsed.keys.push_back(options.arg());
//     else return Err{options.unknown()};
//     if (!ok) return Err{options.error()};
//   }
//
// Thread safety: a plain value type over borrowed arguments.
#pragma once

#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/result.hpp>

namespace elfin::cli {

class Options {
 public:
  explicit Options(const std::vector<std::string_view>& args) : args_(args) {}

  /// Moves to the next argument; false after the last.
  [[nodiscard]] bool next() {
    ++index_;
    option_ = {};
    return index_ < args_.size();
  }

  /// The current argument as given.
  [[nodiscard]] std::string_view arg() const { return args_[index_]; }

  /// Whether the current argument is `option`, alone or as `option=VALUE`; remembers it for value().
  [[nodiscard]] bool is(std::string_view option) {
    const std::string_view current = arg();
    const bool match = current == option ||
                       (current.starts_with(option) && current.size() > option.size() && current[option.size()] == '=');
    if (match) option_ = option;
    return match;
  }

  /// Whether the current argument is not an option (a key, a subcommand, `-` for stdin).
  [[nodiscard]] bool positional() const { return !arg().starts_with("-") || arg() == "-"; }

  /// The matched option's value: after its `=`, or the next argument (consumed).
  [[nodiscard]] Result<std::string, std::string> value() {
    const std::string_view current = arg();
    if (current.size() > option_.size()) return std::string(current.substr(option_.size() + 1));
    if (index_ + 1 == args_.size()) return Err{fmt::format("{} needs a value", option_)};
    return std::string(args_[++index_]);
  }

  /// Stores the matched option's value in `target` (a string or an optional one); false, with
  /// error() set, when the value is missing.
  template <class Target>
  [[nodiscard]] bool read(Target& target) {
    auto text = value();
    if (!text) return failed(text.error());
    target = std::move(*text);
    return true;
  }

  /// Stores the matched option's value, an integer in [low, high], in `target` (a T or an optional
  /// one); false, with error() set, when it is missing, not an integer or out of range.
  template <class T, class Target>
  [[nodiscard]] bool read(Target& target, T low, T high) {
    auto text = value();
    if (!text) return failed(text.error());
    auto parsed = parse_number<T>(option_, *text, low, high);
    if (!parsed) return failed(parsed.error());
    target = *parsed;
    return true;
  }

  /// Why the last read() failed.
  [[nodiscard]] const std::string& error() const { return error_; }

  /// `text` as an integer in [low, high]; the error names `option`.
  template <class T>
  [[nodiscard]] static Result<T, std::string> parse_number(std::string_view option, std::string_view text, T low,
                                                           T high) {
    T parsed{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || parsed < low || parsed > high) {
      return Err{fmt::format("{} `{}`: expected an integer from {} to {}", option, text, low, high)};
    }
    return parsed;
  }

  /// The usage error for an argument no branch took.
  [[nodiscard]] std::string unknown() const { return fmt::format("unknown option `{}`", arg()); }

 private:
  bool failed(std::string error) {
    error_ = std::move(error);
    return false;
  }

  const std::vector<std::string_view>& args_;
  std::size_t index_ = static_cast<std::size_t>(-1);
  std::string_view option_;
  std::string error_;
};

}  // namespace elfin::cli
