// The pod config's checks.
#include <utility>

#include <elfin/actors/sharding/config.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/hashing/shard_function.hpp>

namespace elfin::actors::sharding {

std::vector<std::string> validate(const PodConfig& config, const AnyConfig& section) {
  ConfigChecks checks(section);
  if (auto function = hashing::ShardFunction::parse(config.shard_function); !function) {
    checks.add("shard_function", hashing::config_problem(function.error()));
  }
  if (config.version.empty()) checks.add("version", "must not be empty (e.g. \"1.0.0\")");
  checks.positive({
      {"entity_max_idle_time", config.entity_max_idle_time},
      {"entity_termination_timeout", config.entity_termination_timeout},
      {"send_timeout", config.send_timeout},
      {"retry_interval", config.retry_interval},
      {"refresh_interval", config.refresh_interval},
      {"unhealthy_report_interval", config.unhealthy_report_interval},
  });
  return std::move(checks).problems();
}

}  // namespace elfin::actors::sharding
