#include <elfin/kv/cluster_files.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace elfin::kv {

namespace {

std::string node_list(std::uint16_t last) {
  std::string out;
  for (std::uint16_t n = 1; n <= last; ++n) out += fmt::format("{}{}", n == 1 ? "" : ", ", n);
  return out;
}

std::string node_list(const ClusterLayout& layout) { return node_list(layout.pods); }

/// The nodes the pods' remote groups name: with a manager, room for pods added later.
std::string peer_list(const ClusterLayout& layout) {
  return node_list(layout.replication_factor == 0 ? layout.pods : std::max(layout.pods, kMaxPods));
}

/// A pod's topology additions with a manager: the manager's group and the routes to it.
std::string manager_routes(const ClusterLayout& layout) {
  if (layout.replication_factor == 0) return "";
  return fmt::format(R"(
# The shard manager (node {0}): the front registers this pod and receives the assignment.
[[remote]]
name = "sharding.manager"
nodes = [{0}]

[[routes]]
from = "kv"
to = "sharding.manager"
messages = ["sharding.Register", "sharding.Unregister", "sharding.GetAssignments", "sharding.ReportUnhealthyPod"]

# The assignment, as the partitions' placement table.
[[routes]]
from = "kv"
to = "partitions"
messages = ["raft.Placement"]
)",
                     kManagerNode);
}

/// The telemeter and dumper groups every node mounts.
constexpr const char* kObservability = R"(
# Observability: the telemeter serves every group's metrics to Prometheus (/metrics), the dumper
# writes the messages of the groups that dump to the node's dump file (`elfin dump --trace ID`
# reads it; `[common.system.dumping] disabled` in the config says whether they do).
[[groups]]
name = "system.telemeters"
blueprint = "elfin.telemeter"

[[groups]]
name = "system.dumpers"
blueprint = "elfin.dumper"
)";

std::string observability_config(std::uint16_t metrics_port, const std::string& dump_path, bool dumping) {
  return fmt::format(R"(
[system.telemeters]
listen = "127.0.0.1:{}"

[system.dumpers]
path = "{}"

# Every message of every group to the dump file when false: a whole put's story across the pods,
# at a cost in throughput and disk (a reload applies a change).
[common.system.dumping]
disabled = {}
)",
                     metrics_port, dump_path, dumping ? "false" : "true");
}

/// A node's dump file: in its data directory when that is absolute; next to its config file
/// otherwise (the dumper reads a relative path from the config file's directory, while the
/// data directory is relative to where the pods run).
std::string dump_path(const ClusterLayout& layout, const std::string& node) {
  if (!layout.data_dir.starts_with('/')) return fmt::format("{}.dump", node);
  return node == "manager" ? fmt::format("{}/manager.dump", layout.data_dir)
                           : fmt::format("{}/{}/{}.dump", layout.data_dir, node, node);
}

}  // namespace

std::uint16_t ClusterLayout::metrics_port(std::uint16_t node) const {
  if (node == kManagerNode) {
    if (manager_metrics_port != 0) return manager_metrics_port;
    return static_cast<std::uint16_t>(std::min(base_port - 1 + 100, 65535));
  }
  if (node >= 1 && node <= metrics_ports.size() && metrics_ports[node - 1] != 0) return metrics_ports[node - 1];
  return static_cast<std::uint16_t>(std::min(base_port + node - 1 + 100, 65535));
}

std::string ClusterLayout::manager_address() const { return fmt::format("tcp://127.0.0.1:{}", base_port - 1); }

std::vector<std::string> ClusterLayout::addresses() const {
  std::vector<std::string> out;
  for (std::uint16_t n = 1; n <= pods; ++n) out.push_back(fmt::format("tcp://127.0.0.1:{}", base_port + n - 1));
  return out;
}

std::string pod_topology(const ClusterLayout& layout, std::uint16_t node) {
  return fmt::format(R"(# A KV pod (see the guide's KV service chapter): the KV front takes clients' requests and sends
# each to its shard's leader among the partition actors, which replicate through Raft and persist
# through the WAL actors. {2}
#   elfin kv cluster start --dir DIR    writes these files for a local cluster and starts it

[node]
no = {0}
name = "kv-pod-{0}"
config = "pod-{0}.config.toml"

[[groups]]
name = "system.network"
blueprint = "elfin.network"

[[groups]]
name = "wal"
blueprint = "wal.wal"

[[groups]]
name = "partitions"
blueprint = "partition.partitions"

[[groups]]
name = "kv"
blueprint = "kv.front"

# Raft messages to the replica on the node each is addressed to.
[[remote]]
name = "partitions.peers"
nodes = [{1}]
remote_name = "partitions"
pick = "partitions.peer"

# A front's shard requests to the front on the node whose replica it asks.
[[remote]]
name = "kv.peers"
nodes = [{1}]
remote_name = "kv"
pick = "kv.node"

[[routes]]
from = "partitions"
to = "wal"
messages = ["wal.*"]

[[routes]]
from = "partitions"
to = "partitions.peers"
messages = ["raft.RaftMessage"]

[[routes]]
from = "kv"
to = "partitions"
messages = ["raft.Propose", "raft.Read"]

[[routes]]
from = "kv"
to = "kv.peers"
messages = ["kv.ShardRequest"]
{3}{4})",
                     node, peer_list(layout),
                     layout.replication_factor == 0
                         ? "Every pod holds a replica of every shard."
                         : "Each shard lives on the pods the shard manager's assignment names.",
                     manager_routes(layout), layout.observability ? kObservability : "");
}

std::string pod_config(const ClusterLayout& layout, std::uint16_t node) {
  const auto addresses = layout.addresses();
  std::string peers;
  for (std::uint16_t n = 1; n <= layout.pods; ++n) {
    if (n != node) peers += fmt::format("{}\"{}\"", peers.empty() ? "" : ", ", addresses[n - 1]);
  }
  if (layout.replication_factor != 0)
    peers += fmt::format("{}\"{}\"", peers.empty() ? "" : ", ", layout.manager_address());
  const std::string dir = fmt::format("{}/pod-{}", layout.data_dir, node);
  const bool manager = layout.replication_factor != 0;
  const std::string partitions_placement =
      manager ? std::string("placement = \"assignment\"") : fmt::format("nodes = [{}]", node_list(layout));
  const std::string kv_placement =
      manager ? std::string("manager = true") : fmt::format("nodes = [{}]", node_list(layout));
  // Pods on one machine share its cores: a worker per core in each would make the workers hand
  // actors to each other through sleeps and wake-ups (half the CPU of a put, measured at RF 3).
  const std::string runtime = layout.workers == 0 ? std::string{}
                                                  : fmt::format(R"(
# The pods of this cluster share the machine's cores (`elfin kv cluster start --workers`).
[system.runtime]
workers = {}
)",
                                                                layout.workers);
  return fmt::format(R"(# KV pod {0}'s config (see the guide's KV service chapter for every key).

[common.system.logging]
max_level = "Info"
{8}
[system.network]
listen = ["{1}"]
discovery.predefined = [{2}]
discovery.attempt_interval = "500ms"
ping_interval = "1s"
idle_timeout = "5s"

[wal]
dir = "{3}/wal"
# One log per pod: the pods of a machine share its disk, and one log syncs more entries per
# fdatasync than two taking turns (`elfin kv cluster start` keeps an existing pod's count).
wal_count = {9}
segment_bytes = "16MiB"

[partitions]
{4}
tick = "50ms"
election_ticks = 10
heartbeat_ticks = 2
# A shard sleeps a tick after its last request: under uniform load over 1024 shards most take a
# put every few seconds, each tick and heartbeat round awake costs every replica, and the next
# put's Append wakes the followers without a round of its own.
quiesce_after_ticks = 1
snapshot_dir = "{3}/snapshots"
snapshot_every = 10000
proposal_timeout = "3s"

[kv]
{6}
shards = {5}
request_timeout = "5s"
scan_timeout = "30s"
retry_interval = "50ms"
{7})",
                     node, addresses[node - 1], peers, dir, partitions_placement, layout.shards, kv_placement,
                     layout.observability
                         ? observability_config(layout.metrics_port(node),
                                                dump_path(layout, fmt::format("pod-{}", node)), layout.dumping)
                         : std::string{},
                     runtime, layout.wal_count);
}

std::string manager_topology(const ClusterLayout& layout) {
  return fmt::format(R"(# The KV cluster's shard manager: it places each shard on `replication_factor` pods and moves
# replicas when pods join or leave (see the guide's KV service chapter).

[node]
no = {}
name = "kv-manager"
config = "manager.config.toml"

[[groups]]
name = "system.network"
blueprint = "elfin.network"

[[groups]]
name = "sharding.manager"
blueprint = "sharding.manager"
{})",
                     kManagerNode, layout.observability ? kObservability : "");
}

std::string manager_config(const ClusterLayout& layout) {
  return fmt::format(R"(# The KV cluster's shard manager's config (see the guide's Sharding chapter for every key).

[common.system.logging]
max_level = "Info"

[system.network]
listen = ["{0}"]
ping_interval = "1s"
idle_timeout = "5s"

[sharding.manager]
shard_function = "jump-xxh64/1:{1}"
replication_factor = {2}
rebalance_interval = "1s"
rebalance_retry_interval = "1s"
rebalance_rate = 0.25
ping_timeout = "1s"
health_check_interval = "3s"
# The pods dial the manager: a restarted manager waits this long for them before it counts one it
# cannot reach as dead.
reconnect_grace = "5s"
storage.kind = "file"
storage.path = "{3}/manager.state"
{4})",
                     layout.manager_address(), layout.shards, layout.replication_factor, layout.data_dir,
                     layout.observability ? observability_config(layout.metrics_port(kManagerNode),
                                                                 dump_path(layout, "manager"), layout.dumping)
                                          : std::string{});
}

}  // namespace elfin::kv
