#include "shard_command.hpp"

#include <algorithm>

#include <optional>
#include <string>

#include <fmt/format.h>

#include <elfin/hashing/shard_function.hpp>

#include "assignments_command.hpp"
#include "options.hpp"

namespace elfin::cli {

const char* const kShardUsage = R"(usage: elfin shard [options] KEY...

Prints the shard of each KEY (its UTF-8 bytes), one `KEY<tab>SHARD` line each, after a line
naming the shard function. Control bytes and `\` in a KEY are shown as \xNN.

options:
  --function F   jump (default): jump_hash(xxh64(key, seed 0), N), shards 0..N-1
                 shardcake: abs(javaStringHashCode(key) % N) + 1, shards 1..N
                 or a whole shard function as a cluster stores it, e.g. jump-xxh64/1:1024
  --shards N     the shard count, 1 to 2147483647 (default 1024 for jump, 300 for shardcake)
  --             what follows is keys, even if it starts with `-`
  -h, --help     this help

elfin shard --assignments --manager tcp://HOST:PORT prints the live map of a running shard
manager instead (elfin shard --assignments --help).

Exit code 0 if every key has a shard, 1 if one has none (shardcake needs UTF-8), 2 on bad usage.
)";

namespace {

struct ShardArgs {
  std::string function = "jump";
  std::optional<std::string> shards;
  std::vector<std::string_view> keys;
  bool help = false;
};

// Splits options and keys; an error text on bad usage.
Result<ShardArgs, std::string> parse(const std::vector<std::string_view>& args) {
  ShardArgs parsed;
  bool only_keys = false;
  Options options(args);
  while (options.next()) {
    bool ok = true;
    if (only_keys || options.positional()) {
      parsed.keys.push_back(options.arg());
    } else if (options.arg() == "--") {
      only_keys = true;
    } else if (options.arg() == "-h" || options.arg() == "--help") {
      parsed.help = true;
    } else if (options.is("--function")) {
      ok = options.read(parsed.function);
    } else if (options.is("--shards")) {
      ok = options.read(parsed.shards);
    } else {
      return Err{options.unknown()};
    }
    if (!ok) return Err{options.error()};
  }
  if (!parsed.help && parsed.keys.empty()) return Err{std::string("no KEY given")};
  return parsed;
}

// The shard function the options name.
Result<hashing::ShardFunction, std::string> function_of(const ShardArgs& args) {
  using hashing::ShardAlgorithm;
  using hashing::ShardFunction;
  if (args.function.find('/') != std::string::npos) {
    if (args.shards)
      return Err{fmt::format("--shards and a whole shard function (`{}`) do not go together", args.function)};
    auto function = ShardFunction::parse(args.function);
    if (!function) return Err{fmt::format("--function: {}", function.error())};
    return *function;
  }
  ShardAlgorithm algorithm{};
  std::uint32_t shards = 0;
  if (args.function == "jump" || args.function == "jump-xxh64") {
    algorithm = ShardAlgorithm::JumpXxh64;
    shards = ShardFunction::jump_xxh64_default().shard_count();
  } else if (args.function == "shardcake") {
    algorithm = ShardAlgorithm::Shardcake;
    shards = ShardFunction::shardcake_default().shard_count();
  } else {
    return Err{fmt::format("--function `{}`: expected jump, shardcake or <name>/<version>:<shards>", args.function)};
  }
  if (args.shards) {
    auto parsed = Options::parse_number<std::uint32_t>("--shards", *args.shards, 1, ShardFunction::kMaxShards);
    if (!parsed) return Err{parsed.error()};
    shards = *parsed;
  }
  auto function = ShardFunction::latest(algorithm, shards);
  if (!function) return Err{fmt::format("{}", function.error())};
  return *function;
}

// A key as one line shows it: control bytes and backslashes as \xNN, so a key cannot break the
// line format; with `ascii_only` every byte above 0x7E too (a key that is not UTF-8 would garble
// the terminal).
std::string printable(std::string_view key, bool ascii_only) {
  std::string text;
  for (char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F || byte == '\\' || (ascii_only && byte > 0x7F)) {
      text += fmt::format("\\x{:02X}", byte);
    } else {
      text += c;
    }
  }
  return text;
}

}  // namespace

int shard_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
  if (std::find(args.begin(), args.end(), "--assignments") != args.end()) return assignments_command(args, out, err);
  auto parsed = parse(args);
  if (!parsed) {
    fmt::print(err, "elfin shard: {}\n\n{}", parsed.error(), kShardUsage);
    return 2;
  }
  if (parsed->help) {
    fmt::print(out, "{}", kShardUsage);
    return 0;
  }
  auto function = function_of(*parsed);
  if (!function) {
    fmt::print(err, "elfin shard: {}\n", function.error());
    return 2;
  }
  fmt::print(out, "{} (shards {}..{})\n", *function, function->first_shard(), function->last_shard());
  int exit_code = 0;
  for (std::string_view key : parsed->keys) {
    auto shard = function->shard_of(key);
    if (shard) {
      fmt::print(out, "{}\t{}\n", printable(key, false), *shard);
    } else {
      fmt::print(err, "elfin shard: key `{}` has no {} shard: {}\n", printable(key, true), function->algorithm(),
                 shard.error());
      exit_code = 1;
    }
  }
  return exit_code;
}

}  // namespace elfin::cli
