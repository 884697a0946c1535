// ShardFunction: which function maps an entity id to a shard, in which version, over how many
// shards — the value a cluster stores in its configuration and every pod must agree on. Changing
// any of the three re-routes entities, so it is a migration of the whole cluster, never something
// a pod may do on its own: a pod whose function differs from the cluster's is refused when it
// registers (`check_matches`), with both values in the error.
//
// Written as `<name>/<version>:<shards>`:
//   jump-xxh64/1:1024   jump_hash(xxh64(utf8 bytes, seed 0), N); shards 0..N-1 (NoriKV's routing)
//   shardcake/1:300     abs(javaStringHashCode(id) % N) + 1;     shards 1..N   (Shardcake interop)
//
// Thread safety: a plain value type; `shard_of` is a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/hashing/fwd.hpp>
#include <elfin/hashing/java_string_hash.hpp>
#include <elfin/result.hpp>

namespace elfin::hashing {

/// The family of a shard function; the version says which exact definition within it.
enum class ShardAlgorithm : std::uint8_t {
  JumpXxh64,  ///< `jump-xxh64`: the jump consistent hash of the key's XXH64 (seed 0), 0-based
  Shardcake,  ///< `shardcake`: Java String.hashCode modulo N, 1-based
};

/// Why a shard function could not be built or read.
enum class ShardFunctionErrorKind : std::uint8_t {
  Malformed,         ///< not `<name>/<version>:<shards>`
  UnknownAlgorithm,  ///< a name other than `jump-xxh64` and `shardcake`
  UnknownVersion,    ///< a version this build does not define for the algorithm
  BadShardCount,     ///< not an integer in [1, 2147483647]
};

struct ShardFunctionError {
  ShardFunctionErrorKind kind = ShardFunctionErrorKind::Malformed;
  std::string input;  ///< the text (or the part of it) that was refused, for the message

  friend bool operator==(const ShardFunctionError&, const ShardFunctionError&) = default;
};

/// The line a config check shows for a `shard_function` key that did not parse: the error and the
/// two forms that do.
[[nodiscard]] std::string config_problem(const ShardFunctionError& error);

class [[nodiscard]] ShardFunction {
 public:
  static constexpr std::uint32_t kMaxShards = 0x7FFF'FFFF;

  /// `jump-xxh64/1:1024`, the virtual-shard function (the default).
  ShardFunction() = default;

  /// The function `algorithm` in `version` over `shards` shards.
  [[nodiscard]] static Result<ShardFunction, ShardFunctionError> create(ShardAlgorithm algorithm, std::uint32_t version,
                                                                        std::uint32_t shards);
  /// The newest version of `algorithm` over `shards` shards.
  [[nodiscard]] static Result<ShardFunction, ShardFunctionError> latest(ShardAlgorithm algorithm, std::uint32_t shards);
  /// Reads `<name>/<version>:<shards>`, as `to_string` writes it.
  [[nodiscard]] static Result<ShardFunction, ShardFunctionError> parse(std::string_view text);

  /// `jump-xxh64/1:1024`.
  [[nodiscard]] static ShardFunction jump_xxh64_default() { return {}; }
  /// `shardcake/1:300` (Shardcake's default shard count).
  [[nodiscard]] static ShardFunction shardcake_default() { return {ShardAlgorithm::Shardcake, 1, 300}; }

  /// The newest version this build defines for `algorithm`.
  [[nodiscard]] static std::uint32_t latest_version(ShardAlgorithm algorithm) noexcept;

  [[nodiscard]] ShardAlgorithm algorithm() const noexcept { return algorithm_; }
  [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
  [[nodiscard]] std::uint32_t shard_count() const noexcept { return shards_; }
  /// The lowest shard id: 0 for jump-xxh64, 1 for shardcake.
  [[nodiscard]] ShardId first_shard() const noexcept { return algorithm_ == ShardAlgorithm::Shardcake ? 1 : 0; }
  /// The highest shard id: first_shard() + shard_count() - 1.
  [[nodiscard]] ShardId last_shard() const noexcept { return first_shard() + shards_ - 1; }

  /// The shard of the entity id `key` (its UTF-8 bytes). Fails only for shardcake, whose hash is
  /// defined over a string: `key` must then be valid UTF-8.
  [[nodiscard]] Result<ShardId, Utf8Error> shard_of(std::string_view key) const noexcept;

  /// `<name>/<version>:<shards>`, e.g. `jump-xxh64/1:1024`.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const ShardFunction&, const ShardFunction&) = default;

 private:
  ShardFunction(ShardAlgorithm algorithm, std::uint32_t version, std::uint32_t shards)
      : algorithm_(algorithm), version_(version), shards_(shards) {}

  ShardAlgorithm algorithm_ = ShardAlgorithm::JumpXxh64;
  std::uint32_t version_ = 1;
  std::uint32_t shards_ = 1024;
};

/// A pod's shard function is not the cluster's: the pod would route entities elsewhere.
struct ShardFunctionMismatch {
  ShardFunction cluster;
  ShardFunction pod;

  friend bool operator==(const ShardFunctionMismatch&, const ShardFunctionMismatch&) = default;
};

/// Succeeds when a registering pod uses exactly the cluster's shard function (name, version and
/// shard count); otherwise says both.
[[nodiscard]] Result<void, ShardFunctionMismatch> check_matches(const ShardFunction& cluster, const ShardFunction& pod);

/// `jump-xxh64` or `shardcake`, as in the written form.
[[nodiscard]] std::string_view to_string(ShardAlgorithm algorithm) noexcept;
[[nodiscard]] std::string_view to_string(ShardFunctionErrorKind kind) noexcept;

}  // namespace elfin::hashing

template <>
struct fmt::formatter<elfin::hashing::ShardAlgorithm> : fmt::formatter<std::string_view> {
  auto format(elfin::hashing::ShardAlgorithm algorithm, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::hashing::to_string(algorithm), ctx);
  }
};

template <>
struct fmt::formatter<elfin::hashing::ShardFunction> : fmt::formatter<std::string_view> {
  auto format(const elfin::hashing::ShardFunction& function, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(function.to_string(), ctx);
  }
};

template <>
struct fmt::formatter<elfin::hashing::ShardFunctionError> : fmt::formatter<std::string_view> {
  auto format(const elfin::hashing::ShardFunctionError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "shard function `{}`: {}", e.input, elfin::hashing::to_string(e.kind));
  }
};

template <>
struct fmt::formatter<elfin::hashing::ShardFunctionMismatch> : fmt::formatter<std::string_view> {
  auto format(const elfin::hashing::ShardFunctionMismatch& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "the pod's shard function `{}` is not the cluster's `{}`", e.pod, e.cluster);
  }
};
