#include <elfin/hashing/shard_function.hpp>

#include <charconv>

#include <elfin/hashing/jump_hash.hpp>
#include <elfin/hashing/shardcake_shard.hpp>
#include <elfin/hashing/xxh64.hpp>

namespace elfin::hashing {

namespace {

constexpr std::string_view kJumpXxh64 = "jump-xxh64";
constexpr std::string_view kShardcake = "shardcake";

// A decimal number with no sign, no leading `+`, no spaces and nothing after it.
bool parse_u32(std::string_view text, std::uint32_t& out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::uint32_t ShardFunction::latest_version(ShardAlgorithm) noexcept {
  // Each algorithm has one definition so far. A new one (another seed, another hash) gets the
  // next number here and stays selectable by its old number, so a running cluster keeps routing
  // as it did until it migrates.
  return 1;
}

Result<ShardFunction, ShardFunctionError> ShardFunction::create(ShardAlgorithm algorithm, std::uint32_t version,
                                                                std::uint32_t shards) {
  if (version < 1 || version > latest_version(algorithm)) {
    return Err{ShardFunctionError{ShardFunctionErrorKind::UnknownVersion,
                                  fmt::format("{}/{}", hashing::to_string(algorithm), version)}};
  }
  if (shards < 1 || shards > kMaxShards) {
    return Err{ShardFunctionError{ShardFunctionErrorKind::BadShardCount, fmt::format("{}", shards)}};
  }
  return ShardFunction(algorithm, version, shards);
}

Result<ShardFunction, ShardFunctionError> ShardFunction::latest(ShardAlgorithm algorithm, std::uint32_t shards) {
  return create(algorithm, latest_version(algorithm), shards);
}

std::string config_problem(const ShardFunctionError& error) {
  return fmt::format("{} (expected e.g. \"jump-xxh64/1:1024\" or \"shardcake/1:300\")", error);
}

Result<ShardFunction, ShardFunctionError> ShardFunction::parse(std::string_view text) {
  const auto slash = text.find('/');
  const auto colon = text.find(':');
  if (slash == std::string_view::npos || colon == std::string_view::npos || colon < slash) {
    return Err{ShardFunctionError{ShardFunctionErrorKind::Malformed, std::string(text)}};
  }
  const std::string_view name = text.substr(0, slash);
  const std::string_view version_text = text.substr(slash + 1, colon - slash - 1);
  const std::string_view shards_text = text.substr(colon + 1);

  ShardAlgorithm algorithm{};
  if (name == kJumpXxh64) {
    algorithm = ShardAlgorithm::JumpXxh64;
  } else if (name == kShardcake) {
    algorithm = ShardAlgorithm::Shardcake;
  } else {
    return Err{ShardFunctionError{ShardFunctionErrorKind::UnknownAlgorithm, std::string(name)}};
  }
  std::uint32_t version = 0;
  if (!parse_u32(version_text, version)) {
    return Err{ShardFunctionError{ShardFunctionErrorKind::Malformed, std::string(text)}};
  }
  std::uint32_t shards = 0;
  if (!parse_u32(shards_text, shards)) {
    return Err{ShardFunctionError{ShardFunctionErrorKind::BadShardCount, std::string(shards_text)}};
  }
  return create(algorithm, version, shards);
}

Result<ShardId, Utf8Error> ShardFunction::shard_of(std::string_view key) const noexcept {
  if (algorithm_ == ShardAlgorithm::JumpXxh64) return jump_hash(xxh64(key, 0), shards_);
  auto hash = java_string_hash_utf8(key);
  if (!hash) return Err{hash.error()};
  return shardcake_shard(*hash, shards_);
}

std::string ShardFunction::to_string() const {
  return fmt::format("{}/{}:{}", hashing::to_string(algorithm_), version_, shards_);
}

Result<void, ShardFunctionMismatch> check_matches(const ShardFunction& cluster, const ShardFunction& pod) {
  if (cluster == pod) return {};
  return Err{ShardFunctionMismatch{cluster, pod}};
}

std::string_view to_string(ShardAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case ShardAlgorithm::JumpXxh64:
      return kJumpXxh64;
    case ShardAlgorithm::Shardcake:
      return kShardcake;
  }
  return "unknown";
}

std::string_view to_string(ShardFunctionErrorKind kind) noexcept {
  switch (kind) {
    case ShardFunctionErrorKind::Malformed:
      return "expected <name>/<version>:<shards>, e.g. jump-xxh64/1:1024";
    case ShardFunctionErrorKind::UnknownAlgorithm:
      return "unknown algorithm (expected jump-xxh64 or shardcake)";
    case ShardFunctionErrorKind::UnknownVersion:
      return "unknown version of the algorithm (this build knows 1)";
    case ShardFunctionErrorKind::BadShardCount:
      return "the shard count must be an integer from 1 to 2147483647";
  }
  return "unknown error";
}

}  // namespace elfin::hashing
