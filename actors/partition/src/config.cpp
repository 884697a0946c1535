#include <elfin/actors/partition/config.hpp>

#include <fmt/format.h>

#include <elfin/config_checks.hpp>

namespace elfin::actors::partition {

std::vector<std::string> validate(const Config& config, const AnyConfig& section) {
  ConfigChecks checks(section);
  if (config.placement != "nodes" && config.placement != "assignment") {
    checks.add("placement", fmt::format("\"{}\" is neither \"nodes\" nor \"assignment\"", config.placement));
  }
  if (!config.from_assignment() || !config.nodes.empty()) {
    checks.node_numbers("nodes", config.nodes, "the node numbers holding the replicas");
  }
  if (config.reconcile_ticks == 0) checks.add("reconcile_ticks", "must be at least 1");
  if (config.snapshot_dir.empty()) checks.add("snapshot_dir", "required (where snapshot files go)");
  if (config.tick < std::chrono::milliseconds{1}) checks.add("tick", "must be at least 1ms");
  if (config.heartbeat_ticks == 0) checks.add("heartbeat_ticks", "must be at least 1");
  if (config.election_ticks <= config.heartbeat_ticks) {
    checks.add("election_ticks",
               fmt::format("{} must be above heartbeat_ticks ({})", config.election_ticks, config.heartbeat_ticks));
  }
  if (config.snapshot_every == 0) checks.add("snapshot_every", "must be at least 1");
  if (config.proposal_timeout < std::chrono::milliseconds{1}) checks.add("proposal_timeout", "must be at least 1ms");
  if (config.max_inflight == 0) checks.add("max_inflight", "must be at least 1");
  if (config.max_append_bytes.bytes == 0) checks.add("max_append_bytes", "must be above 0");
  if (config.recovery_read_bytes.bytes == 0) checks.add("recovery_read_bytes", "must be above 0");
  return std::move(checks).problems();
}

}  // namespace elfin::actors::partition
