#include "placement.hpp"

#include <algorithm>
#include <optional>
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
    const std::size_t i = partition - first_partition;
    out.settled = !out.replicas.empty() && i < first_owners.size() && first_owners[i] == out.replicas.front();
  }
  return out;
}

std::vector<pr::NodeId> distinct(std::vector<pr::NodeId> replicas) {
  std::vector<pr::NodeId> out;
  for (pr::NodeId node : replicas) {
    if (node != 0 && std::find(out.begin(), out.end(), node) == out.end()) out.push_back(node);
  }
  return out;
}

Task<> placement_exec(PartitionContext ctx) {
  std::optional<PlacementChanged> table;
  std::vector<std::pair<pr::PartitionId, ResponseToken<GetPlacement>>> waiting;
  while (auto envelope = co_await ctx.recv()) {
    std::optional<PlacementChanged> newer;
    co_await handle(
        *envelope,
        [&](const pr::Placement& placement) {
          if (table && placement.epoch <= table->epoch) return;
          newer = PlacementChanged{placement.epoch, placement.first_partition, placement.replicas, {}};
          // The first owner each partition had in the tables seen since start, kept.
          newer->first_owners.resize(placement.replicas.size());
          for (std::size_t i = 0; i < placement.replicas.size(); ++i) {
            const std::size_t at = i + placement.first_partition;  // same numbering in every table
            pr::NodeId first = 0;
            if (table && at >= table->first_partition && at - table->first_partition < table->first_owners.size()) {
              first = table->first_owners[at - table->first_partition];
            }
            if (first == 0 && !placement.replicas[i].empty()) first = placement.replicas[i].front();
            newer->first_owners[i] = first;
          }
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
    table = std::move(*newer);
    for (auto& [partition, token] : waiting) std::move(token).respond(table->of(partition));
    waiting.clear();
    // Unbounded: a busy partition's full mailbox must not hold the table back from the others.
    std::ignore = ctx.unbounded_send_to(ctx.group_addr(), *table);
  }
}

}  // namespace elfin::actors::partition::internal
