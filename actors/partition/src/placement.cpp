#include "placement.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>

#include <elfin/handle.hpp>

namespace elfin::actors::partition::internal {

namespace pr = protocols::raft;

PlacementOf PlacementChanged::of(pr::PartitionId partition) const {
  PlacementOf out;
  out.epoch = epoch;
  if (partition >= first_partition && partition - first_partition < replicas.size()) {
    out.replicas = distinct(replicas[partition - first_partition]);
  }
  out.nodes = nodes;
  return out;
}

std::vector<pr::NodeId> distinct(std::vector<pr::NodeId> replicas) {
  std::vector<pr::NodeId> out;
  for (pr::NodeId node : replicas) {
    if (node != 0 && std::find(out.begin(), out.end(), node) == out.end()) out.push_back(node);
  }
  return out;
}

namespace {

/// The replicas this node holds on disk that `table` places elsewhere, started (Wake).
void wake_strays(PartitionContext& ctx, const PlacementChanged& table) {
  const pr::NodeId self = ctx.addr().node_no();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(ctx.config().snapshot_dir, error)) {
    if (!entry.is_directory(error)) continue;
    const std::string name = entry.path().filename().string();
    pr::PartitionId partition = 0;
    const auto [end, parsed] = std::from_chars(name.data(), name.data() + name.size(), partition);
    if (parsed != std::errc{} || end != name.data() + name.size()) continue;
    const auto placed = table.of(partition).replicas;
    if (std::find(placed.begin(), placed.end(), self) != placed.end()) continue;
    std::ignore = ctx.unbounded_send_to(ctx.group_addr(), Wake{partition});
  }
}

}  // namespace

Task<> placement_exec(PartitionContext ctx) {
  std::optional<PlacementChanged> table;
  std::vector<std::pair<pr::PartitionId, ResponseToken<GetPlacement>>> waiting;
  while (auto envelope = co_await ctx.recv()) {
    std::optional<PlacementChanged> newer;
    co_await handle(
        *envelope,
        [&](const pr::Placement& placement) {
          if (table && placement.epoch <= table->epoch) return;
          newer = PlacementChanged{placement.epoch, placement.first_partition, placement.replicas, placement.nodes};
          if (newer->nodes.empty()) {
            for (const auto& replicas : placement.replicas)
              newer->nodes.insert(newer->nodes.end(), replicas.begin(), replicas.end());
          }
          std::sort(newer->nodes.begin(), newer->nodes.end());
          newer->nodes.erase(std::unique(newer->nodes.begin(), newer->nodes.end()), newer->nodes.end());
          std::erase(newer->nodes, pr::NodeId{0});
        },
        [&](const GetPlacement& get, ResponseToken<GetPlacement> token) {
          if (table) {
            std::move(token).respond(table->of(get.partition));
          } else {
            waiting.emplace_back(get.partition, std::move(token));
          }
        },
        [](const PlacementChanged&) {});  // its own broadcast comes back to it
    if (!newer) continue;
    const bool first = !table.has_value();
    table = std::move(*newer);
    for (auto& [partition, token] : waiting) std::move(token).respond(table->of(partition));
    waiting.clear();
    // Unbounded: a busy partition's full mailbox must not hold the table back from the others.
    std::ignore = ctx.unbounded_send_to(ctx.group_addr(), *table);
    if (first) wake_strays(ctx, *table);
  }
}

}  // namespace elfin::actors::partition::internal
