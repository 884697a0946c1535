#include <elfin/actors/kv/config.hpp>

#include <algorithm>

namespace elfin::actors::kv {

std::vector<std::string> validate(const Config& config) {
  std::vector<std::string> errors;
  if (config.nodes.empty()) errors.emplace_back("nodes: required (the pods holding the replicas)");
  if (std::find(config.nodes.begin(), config.nodes.end(), 0) != config.nodes.end()) {
    errors.emplace_back("nodes: 0 is not a node number");
  }
  auto sorted = config.nodes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    errors.emplace_back("nodes: a node is listed twice");
  if (config.shards == 0 || config.shards > 0x7FFF'FFFFu) {
    errors.emplace_back("shards: must be from 1 to 2147483647 (the jump hash's buckets)");
  }
  if (config.request_timeout.count() <= 0) errors.emplace_back("request_timeout: must be positive");
  if (config.scan_timeout.count() <= 0) errors.emplace_back("scan_timeout: must be positive");
  if (config.retry_interval.count() <= 0) errors.emplace_back("retry_interval: must be positive");
  if (config.max_scan_limit == 0) errors.emplace_back("max_scan_limit: must be at least 1");
  return errors;
}

}  // namespace elfin::actors::kv
