#include <elfin/actors/partition/config.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace elfin::actors::partition {

std::vector<std::string> validate(const Config& config) {
  std::vector<std::string> errors;
  if (config.nodes.empty()) errors.emplace_back("nodes: required (the node numbers holding the replicas)");
  if (std::find(config.nodes.begin(), config.nodes.end(), 0) != config.nodes.end()) {
    errors.emplace_back("nodes: 0 is not a node number");
  }
  auto sorted = config.nodes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    errors.emplace_back("nodes: a node is listed twice");
  if (config.snapshot_dir.empty()) errors.emplace_back("snapshot_dir: required (where snapshot files go)");
  if (config.tick < std::chrono::milliseconds{1}) errors.emplace_back("tick: must be at least 1ms");
  if (config.heartbeat_ticks == 0) errors.emplace_back("heartbeat_ticks: must be at least 1");
  if (config.election_ticks <= config.heartbeat_ticks) {
    errors.push_back(fmt::format("election_ticks: {} must be above heartbeat_ticks ({})", config.election_ticks,
                                 config.heartbeat_ticks));
  }
  if (config.snapshot_every == 0) errors.emplace_back("snapshot_every: must be at least 1");
  if (config.proposal_timeout < std::chrono::milliseconds{1})
    errors.emplace_back("proposal_timeout: must be at least 1ms");
  if (config.max_inflight == 0) errors.emplace_back("max_inflight: must be at least 1");
  if (config.max_append_bytes.bytes == 0) errors.emplace_back("max_append_bytes: must be above 0");
  if (config.recovery_read_bytes.bytes == 0) errors.emplace_back("recovery_read_bytes: must be above 0");
  return errors;
}

}  // namespace elfin::actors::partition
