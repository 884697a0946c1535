#include <elfin/duration.hpp>

#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

namespace elfin {

namespace {

struct Unit {
  std::string_view name;
  double factor;  // nanoseconds or bytes per unit
};

constexpr std::array kDurationUnits{
    Unit{"ns", 1.0}, Unit{"us", 1e3},   Unit{"ms", 1e6},   Unit{"s", 1e9},
    Unit{"m", 60e9}, Unit{"min", 60e9}, Unit{"h", 3600e9}, Unit{"d", 86400e9},
};

constexpr std::array kSizeUnits{
    Unit{"", 1.0},
    Unit{"B", 1.0},
    Unit{"KB", 1e3},
    Unit{"MB", 1e6},
    Unit{"GB", 1e9},
    Unit{"TB", 1e12},
    Unit{"KiB", 1024.0},
    Unit{"MiB", 1048576.0},
    Unit{"GiB", 1073741824.0},
    Unit{"TiB", 1099511627776.0},
};

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// One `<number><unit>` part at the front of `text`; advances `text` past it.
struct Part {
  double number;
  std::string_view unit;
};

std::optional<Part> take_part(std::string_view& text) {
  std::size_t i = 0;
  while (i < text.size() && (is_digit(text[i]) || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double number = 0;
  try {
    number = std::stod(std::string{text.substr(0, i)});
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::size_t j = i;
  while (j < text.size() && is_space(text[j])) ++j;  // "5 s" reads as "5s"
  std::size_t k = j;
  while (k < text.size() && is_alpha(text[k])) ++k;
  Part part{number, text.substr(j, k - j)};
  text.remove_prefix(k);
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  return part;
}

template <std::size_t N>
std::optional<double> factor_of(const std::array<Unit, N>& units, std::string_view name) {
  for (const auto& unit : units) {
    if (unit.name == name) return unit.factor;
  }
  return std::nullopt;
}

}  // namespace

Result<std::chrono::nanoseconds, ConfigError> parse_duration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Err{ConfigError(ConfigError::Invalid, fmt::format("invalid duration \"{}\": {} (write e.g. \"500ms\", "
                                                             "\"5s\", \"1m 30s\")",
                                                             text, why))};
  };
  std::string_view rest = text;
  while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
  if (rest.empty()) return bad("empty");
  double total = 0;
  while (!rest.empty()) {
    auto part = take_part(rest);
    if (!part) return bad("expected a number");
    if (part->unit.empty()) return bad("a unit is required (ns, us, ms, s, m, h, d)");
    auto factor = factor_of(kDurationUnits, part->unit);
    if (!factor) return bad(fmt::format("unknown unit \"{}\"", part->unit));
    total += part->number * *factor;
  }
  if (total > static_cast<double>(std::numeric_limits<std::int64_t>::max())) return bad("too long");
  return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(total))};
}

std::string format_duration(std::chrono::nanoseconds d) {
  if (d.count() == 0) return "0s";
  constexpr std::array<std::pair<std::int64_t, std::string_view>, 7> kParts{{
      {86400'000'000'000, "d"},
      {3600'000'000'000, "h"},
      {60'000'000'000, "m"},
      {1'000'000'000, "s"},
      {1'000'000, "ms"},
      {1'000, "us"},
      {1, "ns"},
  }};
  std::string out = d.count() < 0 ? "-" : "";
  auto left = d.count() < 0 ? -d.count() : d.count();
  std::string_view separator;
  for (const auto& [nanos, unit] : kParts) {
    if (left < nanos) continue;
    out += fmt::format("{}{}{}", separator, left / nanos, unit);
    separator = " ";
    left %= nanos;
  }
  return out;
}

Result<ByteSize, ConfigError> parse_size(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Err{ConfigError(ConfigError::Invalid,
                           fmt::format("invalid size \"{}\": {} (write e.g. 4096, \"64KiB\", \"1MB\")", text, why))};
  };
  std::string_view rest = text;
  while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
  auto part = take_part(rest);
  if (!part) return bad("expected a number");
  if (!rest.empty()) return bad("unexpected text after the unit");
  auto factor = factor_of(kSizeUnits, part->unit);
  if (!factor) return bad(fmt::format("unknown unit \"{}\"", part->unit));
  double bytes = std::round(part->number * *factor);
  if (bytes > static_cast<double>(std::numeric_limits<std::uint64_t>::max()) / 2) return bad("too large");
  return ByteSize{static_cast<std::uint64_t>(bytes)};
}

}  // namespace elfin
