// The KV service's pod files: the topology and config of each pod of a local cluster on loopback
// (system.network, the WAL actors, the partition actors and their `partitions.peers` remote
// group, the KV front and its `kv.peers` remote group). `elfin kv cluster start` writes them into
// its directory; services/kv/pod-N.toml and pod-N.config.toml are the same files for the
// default layout (data under `kv-data/`, relative to the directory the pods run in).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elfin::kv {

struct ClusterLayout {
  std::uint16_t pods = 3;            ///< node numbers 1..pods, every shard replicated on each
  std::uint16_t base_port = 9501;    ///< pod N listens on 127.0.0.1:(base_port + N - 1)
  std::string data_dir = "kv-data";  ///< pod N's WAL and snapshots under <data_dir>/pod-N/
  std::uint32_t shards = 1024;       ///< the fronts' `shards`

  /// "tcp://127.0.0.1:<port>" of every pod, in node order.
  [[nodiscard]] std::vector<std::string> addresses() const;
};

/// pod-<node>.toml: the pod's topology (its config file is pod-<node>.config.toml next to it).
[[nodiscard]] std::string pod_topology(const ClusterLayout& layout, std::uint16_t node);
/// pod-<node>.config.toml.
[[nodiscard]] std::string pod_config(const ClusterLayout& layout, std::uint16_t node);

}  // namespace elfin::kv
