// Template bodies for config.hpp: decoding a msgpack table into a config struct key by key, so a
// value that does not fit is reported with its key path and the type that was expected, and keys
// the struct does not know are reported too.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <elfin/config.hpp>

namespace elfin::detail {

template <class T>
concept ConfigStruct = requires(T& t) { t.elfin_config_fields(); };

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsDuration : std::false_type {};
template <class R, class P>
struct IsDuration<std::chrono::duration<R, P>> : std::true_type {};

/// One problem found while decoding, before it is given a location.
struct ConfigIssue {
  std::string path;
  std::string what;
  bool error = true;
};
using ConfigIssues = std::vector<ConfigIssue>;

[[nodiscard]] std::string join_config_path(std::string_view prefix, std::string_view key);
/// "a string", "an integer", "a table", ... for the value found.
[[nodiscard]] std::string describe_config_value(const msgpack::object& o);
/// The value of `key` in the map `o`, or nullptr.
[[nodiscard]] const msgpack::object* config_lookup(const msgpack::object& o, std::string_view key);
/// Turns issues into report lines naming file, line, scope and key path.
void report_config_issues(const AnyConfig& config, const ConfigIssues& issues, std::string_view scope,
                          ConfigReport& report);
/// The ConfigError for a report with errors (fields from the first error issue), or nullopt.
[[nodiscard]] std::optional<ConfigError> config_error_of(const AnyConfig& config, const ConfigIssues& issues,
                                                         const ConfigReport& report);

/// What a config value of type T must look like, in words.
template <class T>
std::string expected_config_type() {
  if constexpr (std::is_same_v<T, bool>) {
    return "a boolean";
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return "a non-negative integer";
  } else if constexpr (std::is_integral_v<T>) {
    return "an integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "a number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "a string";
  } else if constexpr (IsDuration<T>::value) {
    return "a duration such as \"500ms\" or \"5s\"";
  } else if constexpr (std::is_same_v<T, ByteSize>) {
    return "a size such as 4096 or \"64KiB\"";
  } else if constexpr (IsVector<T>::value) {
    return "an array of " + expected_config_type<typename T::value_type>() + "s";
  } else if constexpr (IsOptional<T>::value) {
    return expected_config_type<typename T::value_type>();
  } else if constexpr (ConfigStruct<T> || std::is_same_v<T, AnyConfig>) {
    return "a table";
  } else {
    return "a value of the config's type";
  }
}

template <class C>
void decode_config_struct(const msgpack::object& o, C& out, const std::string& path, ConfigIssues& issues,
                          bool group_section);

template <class T>
void decode_config_value(const msgpack::object& o, T& out, const std::string& path, ConfigIssues& issues) {
  if constexpr (ConfigStruct<T>) {
    decode_config_struct(o, out, path, issues, false);
  } else if constexpr (std::is_same_v<T, AnyConfig>) {
    if (o.type != msgpack::type::MAP) {
      issues.push_back({path, "expected a table, got " + describe_config_value(o)});
    } else {
      out = AnyConfig::from_object(o);
    }
  } else if constexpr (IsOptional<T>::value) {
    typename T::value_type value{};
    const auto before = issues.size();
    decode_config_value(o, value, path, issues);
    if (issues.size() == before) out = std::move(value);
  } else if constexpr (IsVector<T>::value) {
    if (o.type != msgpack::type::ARRAY) {
      issues.push_back({path, "expected " + expected_config_type<T>() + ", got " + describe_config_value(o)});
      return;
    }
    T values(o.via.array.size);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
      decode_config_value(o.via.array.ptr[i], values[i], path + "[" + std::to_string(i) + "]", issues);
    }
    out = std::move(values);
  } else {
    try {
      o.convert(out);
    } catch (const std::invalid_argument& e) {  // duration and size parsers say what is wrong
      issues.push_back({path, std::string(e.what()) + ", got " + describe_config_value(o)});
    } catch (const std::exception&) {
      issues.push_back({path, "expected " + expected_config_type<T>() + ", got " + describe_config_value(o)});
    }
  }
}

template <class C>
void decode_config_struct(const msgpack::object& o, C& out, const std::string& path, ConfigIssues& issues,
                          bool group_section) {
  if (o.type != msgpack::type::MAP) {
    issues.push_back({path, "expected a table, got " + describe_config_value(o)});
    return;
  }
  std::vector<std::string_view> known;
  auto fields = out.elfin_config_fields();
  std::apply(
      [&](auto&... items) {
        // The tuple alternates key names and member references: (name0, member0, name1, ...).
        auto pairs = std::forward_as_tuple(items...);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          (
              [&] {
                std::string_view name = std::get<2 * I>(pairs);
                known.push_back(name);
                if (const msgpack::object* value = config_lookup(o, name)) {
                  decode_config_value(*value, std::get<2 * I + 1>(pairs), join_config_path(path, name), issues);
                }
              }(),
              ...);
        }(std::make_index_sequence<sizeof...(items) / 2>{});
      },
      fields.a);
  for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
    const auto& key = o.via.map.ptr[i].key;
    if (key.type != msgpack::type::STR) continue;
    std::string_view name{key.via.str.ptr, key.via.str.size};
    if (group_section && name == "system") continue;  // the runtime's keys, checked apart
    bool is_known = false;
    for (auto k : known) is_known = is_known || k == name;
    if (!is_known) issues.push_back({join_config_path(path, name), "unknown key", false});
  }
}

template <class C>
C decode_config_issues(const std::string& bytes, ConfigIssues& issues, bool group_section) {
  C config{};
  auto handle = msgpack::unpack(bytes.data(), bytes.size());
  if constexpr (ConfigStruct<C>) {
    decode_config_struct(handle.get(), config, "", issues, group_section);
  } else {
    try {
      handle.get().convert(config);
    } catch (const std::exception& e) {
      issues.push_back({"", std::string("does not fit the config type: ") + e.what()});
    }
  }
  return config;
}

}  // namespace elfin::detail

namespace elfin {

template <class C>
C AnyConfig::decode_reporting(ConfigReport& report, std::string_view scope, bool group_section) const {
  detail::ConfigIssues issues;
  C config = detail::decode_config_issues<C>(*bytes_, issues, group_section);
  detail::report_config_issues(*this, issues, scope, report);
  return config;
}

template <class C>
Result<C, ConfigError> AnyConfig::decode() const {
  detail::ConfigIssues issues;
  C config = detail::decode_config_issues<C>(*bytes_, issues, true);
  ConfigReport report;
  detail::report_config_issues(*this, issues, "", report);
  if (auto error = detail::config_error_of(*this, issues, report)) return Err{std::move(*error)};
  return config;
}

}  // namespace elfin
