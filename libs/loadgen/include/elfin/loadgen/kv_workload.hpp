// The key-value workload every KV load generator here runs, whatever store it drives (elfin's
// KV service, Redis, etcd): the same keys, values, mix and key choice for the same seed, so
// side-by-side figures are of one workload.
//
//   keys     PREFIX + the key's index, 8 digits ("bench:00000042")
//   values   the operation's number in hex, padded with 'v' to the value size
//   mix      get / put / cas percentages ("90:10", "50:45:5"); each operation draws its kind
//   choice   uniform over K keys, Zipf(s) over them (key 0 hottest), or sequential (operation i
//            touches key i mod K: distinct keys for a fill or a count check)
//
// Thread safety: KvMix and key_name/value are pure; a KeyPicker is one worker's.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/loadgen/key_chooser.hpp>
#include <elfin/loadgen/random.hpp>

namespace elfin::loadgen {

enum class KvOp : std::uint8_t { Get = 0, Put = 1, Cas = 2 };
inline constexpr const char* kKvOpNames[] = {"get", "put", "cas"};

struct KvMix {
  unsigned get = 50;
  unsigned put = 50;
  unsigned cas = 0;

  /// "GET:PUT" or "GET:PUT:CAS", percentages adding up to 100; nullopt when malformed.
  [[nodiscard]] static std::optional<KvMix> parse(std::string_view text) {
    unsigned parts[3] = {0, 0, 0};
    int count = 0;
    for (std::size_t start = 0; start <= text.size() && count < 4; ++count) {
      const auto colon = std::min(text.find(':', start), text.size());
      if (count == 3) return std::nullopt;
      const std::string_view part = text.substr(start, colon - start);
      const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), parts[count]);
      if (part.empty() || ec != std::errc{} || end != part.data() + part.size()) return std::nullopt;
      start = colon + 1;
    }
    if (count < 2 || parts[0] + parts[1] + parts[2] != 100) return std::nullopt;
    return KvMix{parts[0], parts[1], parts[2]};
  }

  /// The kind of an operation, from a draw uniform in [0, 100).
  [[nodiscard]] KvOp pick(std::uint64_t draw) const {
    if (draw < get) return KvOp::Get;
    if (draw < get + put) return KvOp::Put;
    return KvOp::Cas;
  }
};

[[nodiscard]] inline std::string key_name(std::string_view prefix, std::uint64_t index) {
  return fmt::format("{}{:08}", prefix, index);
}

[[nodiscard]] inline std::string kv_value(std::uint64_t op, std::size_t size) {
  std::string value = fmt::format("{:x}", op);
  value.resize(size, 'v');
  return value;
}

enum class KeyChoice : std::uint8_t { Uniform, Zipf, Sequential };

/// One worker's choice of keys and kinds, seeded from (seed, worker).
class KeyPicker {
 public:
  KeyPicker(KeyChoice choice, std::uint64_t keys, double zipf, std::uint64_t seed, unsigned worker)
      : choice_(choice),
        keys_(keys),
        uniform_(keys, seed * 0x9E3779B97F4A7C15ull + 2 * std::uint64_t{worker}),
        zipf_(keys, choice == KeyChoice::Zipf ? zipf : 1.0, seed * 0x9E3779B97F4A7C15ull + 2 * std::uint64_t{worker}),
        kinds_(seed * 0xD1B54A32D192ED03ull + 2 * std::uint64_t{worker} + 1) {}

  [[nodiscard]] std::uint64_t key(std::uint64_t op) {
    switch (choice_) {
      case KeyChoice::Zipf:
        return zipf_.next();
      case KeyChoice::Sequential:
        return op % keys_;
      case KeyChoice::Uniform:
        break;
    }
    return uniform_.next();
  }
  [[nodiscard]] KvOp kind(const KvMix& mix) { return mix.pick(kinds_.below(100)); }

 private:
  KeyChoice choice_;
  std::uint64_t keys_;
  UniformChooser uniform_;
  ZipfChooser zipf_;
  Random kinds_;
};

}  // namespace elfin::loadgen
