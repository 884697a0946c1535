// The pod config's checks.
#include <chrono>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/sharding/config.hpp>
#include <elfin/hashing/shard_function.hpp>

namespace elfin::actors::sharding {

std::vector<std::string> validate(const PodConfig& config, const AnyConfig& section) {
  std::vector<std::string> errors;
  auto add = [&](std::string_view key, std::string what) {
    errors.push_back(fmt::format("{}{}: {}", section.where(key), key, what));
  };
  if (auto function = hashing::ShardFunction::parse(config.shard_function); !function) {
    add("shard_function",
        fmt::format("{} (expected e.g. \"jump-xxh64/1:1024\" or \"shardcake/1:300\")", function.error()));
  }
  if (config.version.empty()) add("version", "must not be empty (e.g. \"1.0.0\")");
  const std::pair<std::string_view, std::chrono::milliseconds> durations[] = {
      {"entity_max_idle_time", config.entity_max_idle_time},
      {"entity_termination_timeout", config.entity_termination_timeout},
      {"send_timeout", config.send_timeout},
      {"retry_interval", config.retry_interval},
      {"refresh_interval", config.refresh_interval},
      {"unhealthy_report_interval", config.unhealthy_report_interval},
  };
  for (const auto& [key, value] : durations) {
    if (value.count() <= 0) add(key, fmt::format("must be positive, got {} ms", value.count()));
  }
  return errors;
}

}  // namespace elfin::actors::sharding
