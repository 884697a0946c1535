#include <elfin/kv/cluster_files.hpp>

#include <fmt/format.h>

namespace elfin::kv {

namespace {

std::string node_list(const ClusterLayout& layout) {
  std::string out;
  for (std::uint16_t n = 1; n <= layout.pods; ++n) out += fmt::format("{}{}", n == 1 ? "" : ", ", n);
  return out;
}

}  // namespace

std::vector<std::string> ClusterLayout::addresses() const {
  std::vector<std::string> out;
  for (std::uint16_t n = 1; n <= pods; ++n) out.push_back(fmt::format("tcp://127.0.0.1:{}", base_port + n - 1));
  return out;
}

std::string pod_topology(const ClusterLayout& layout, std::uint16_t node) {
  return fmt::format(R"(# A KV pod (see the guide's KV service chapter): the KV front takes clients' requests and sends
# each to its shard's leader among the partition actors, which replicate through Raft and persist
# through the WAL actors. Every pod holds a replica of every shard.
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
)",
                     node, node_list(layout));
}

std::string pod_config(const ClusterLayout& layout, std::uint16_t node) {
  const auto addresses = layout.addresses();
  std::string peers;
  for (std::uint16_t n = 1; n <= layout.pods; ++n) {
    if (n != node) peers += fmt::format("{}\"{}\"", peers.empty() ? "" : ", ", addresses[n - 1]);
  }
  const std::string dir = fmt::format("{}/pod-{}", layout.data_dir, node);
  return fmt::format(R"(# KV pod {0}'s config (see the guide's KV service chapter for every key).

[common.system.logging]
max_level = "Info"

[system.network]
listen = ["{1}"]
discovery.predefined = [{2}]
discovery.attempt_interval = "500ms"
ping_interval = "1s"
idle_timeout = "5s"

[wal]
dir = "{3}/wal"
wal_count = 2
segment_bytes = "16MiB"

[partitions]
nodes = [{4}]
tick = "50ms"
election_ticks = 10
heartbeat_ticks = 2
snapshot_dir = "{3}/snapshots"
snapshot_every = 10000
proposal_timeout = "3s"

[kv]
nodes = [{4}]
shards = {5}
request_timeout = "5s"
scan_timeout = "30s"
retry_interval = "50ms"
)",
                     node, addresses[node - 1], peers, dir, node_list(layout), layout.shards);
}

}  // namespace elfin::kv
