// The manager's config checks and the storage it names.
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/shard_manager/config.hpp>
#include <elfin/actors/shard_manager/file_storage.hpp>
#include <elfin/actors/shard_manager/redis_storage.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/hashing/shard_function.hpp>

namespace elfin::actors::shard_manager {

namespace {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

std::optional<HostPort> parse_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::uint16_t port = 0;
  const std::string_view digits = text.substr(colon + 1);
  if (digits.empty() || std::from_chars(digits.data(), digits.data() + digits.size(), port).ec != std::errc{} ||
      port == 0) {
    return std::nullopt;
  }
  return HostPort{std::string(text.substr(0, colon)), port};
}

}  // namespace

std::vector<std::string> validate(const Config& config, const AnyConfig& section) {
  ConfigChecks checks(section);
  if (auto function = hashing::ShardFunction::parse(config.shard_function); !function) {
    checks.add("shard_function", hashing::config_problem(function.error()));
  }
  checks.positive({
      {"rebalance_interval", config.rebalance_interval},
      {"rebalance_retry_interval", config.rebalance_retry_interval},
      {"ping_timeout", config.ping_timeout},
      {"handoff_timeout", config.handoff_timeout},
      {"persist_retry_interval", config.persist_retry_interval},
      {"health_check_interval", config.health_check_interval},
  });
  if (!(config.rebalance_rate > 0.0 && config.rebalance_rate <= 1.0)) {
    checks.add("rebalance_rate", fmt::format("must be in (0, 1], got {}", config.rebalance_rate));
  }
  if (config.replication_factor == 0) checks.add("replication_factor", "must be at least 1");
  if (config.storage.kind == "file") {
    if (config.storage.path.empty()) checks.add("storage.path", "must name a file");
  } else if (config.storage.kind == "redis") {
    if (!parse_host_port(config.storage.redis)) {
      checks.add("storage.redis", fmt::format("expected host:port, got \"{}\"", config.storage.redis));
    }
    if (config.storage.key.empty()) checks.add("storage.key", "must not be empty");
    checks.positive({{"storage.timeout", config.storage.timeout}});
  } else {
    checks.add("storage.kind", fmt::format("expected \"file\" or \"redis\", got \"{}\"", config.storage.kind));
  }
  return std::move(checks).problems();
}

Result<std::unique_ptr<AssignmentStorage>, std::string> open_storage(const Config& config) {
  if (config.storage.kind == "file") {
    return std::unique_ptr<AssignmentStorage>(std::make_unique<FileStorage>(config.storage.path));
  }
  if (config.storage.kind == "redis") {
    auto address = parse_host_port(config.storage.redis);
    if (!address) return Err{fmt::format("storage.redis: expected host:port, got \"{}\"", config.storage.redis)};
    RedisOptions options;
    options.host = address->host;
    options.port = address->port;
    options.key = config.storage.key;
    options.timeout = config.storage.timeout;
    return std::unique_ptr<AssignmentStorage>(std::make_unique<RedisStorage>(std::move(options)));
  }
  return Err{fmt::format("storage.kind: expected \"file\" or \"redis\", got \"{}\"", config.storage.kind)};
}

}  // namespace elfin::actors::shard_manager
