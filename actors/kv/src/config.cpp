#include <elfin/actors/kv/config.hpp>

#include <elfin/config_checks.hpp>

namespace elfin::actors::kv {

std::vector<std::string> validate(const Config& config, const AnyConfig& section) {
  ConfigChecks checks(section);
  if (!config.manager || !config.nodes.empty()) {
    checks.node_numbers("nodes", config.nodes, "the pods holding the replicas");
  }
  if (config.shards == 0 || config.shards > 0x7FFF'FFFFu) {
    checks.add("shards", "must be from 1 to 2147483647 (the jump hash's buckets)");
  }
  checks.positive({
      {"request_timeout", config.request_timeout},
      {"scan_timeout", config.scan_timeout},
      {"retry_interval", config.retry_interval},
      {"register_retry", config.register_retry},
  });
  if (config.max_scan_limit == 0) checks.add("max_scan_limit", "must be at least 1");
  return std::move(checks).problems();
}

}  // namespace elfin::actors::kv
