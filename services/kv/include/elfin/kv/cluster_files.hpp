// The KV service's pod files: the topology and config of each pod of a local cluster on loopback
// (system.network, the WAL actors, the partition actors and their `partitions.peers` remote
// group, the KV front and its `kv.peers` remote group). `elfin kv cluster start` writes them into
// its directory; services/kv/pod-N.toml and pod-N.config.toml are the same files for the
// default layout (data under `kv-data/`, relative to the directory the pods run in).
//
// With a replication factor (`replication_factor` above 0) the cluster has a shard manager node
// too (manager.toml, node 100, listening on base_port - 1) that places each shard on that many
// pods: every pod's front registers with it, the partitions are placed by its assignment
// (`[partitions] placement = "assignment"`), and the pods' remote groups name nodes 1..kMaxPods
// so that a pod added later (a larger `pods`) is reached by the others. Without one (0), every
// pod holds a replica of every shard, as the shipped files do.
//
// Every node (pods and manager) mounts a telemeter and a dumper too: Prometheus reads its
// /metrics on 127.0.0.1:(its network port + 100) unless `metrics_ports` names another port. With
// `dumping`, every message a node receives or sends goes to <data_dir>/pod-N/pod-N.dump (the
// manager's to <data_dir>/manager.dump; with a relative data_dir, pod-N.dump next to the config
// file), so `elfin dump --trace` follows a request across the pods; without it (the default: dumps
// cost throughput and disk) the configs say `[common.system.dumping] disabled = true`, which a
// config reload can turn off.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace elfin::kv {

/// The node number of a local cluster's shard manager.
inline constexpr std::uint16_t kManagerNode = 100;
/// With a manager: the pods' remote groups name nodes 1..kMaxPods.
inline constexpr std::uint16_t kMaxPods = 16;

struct ClusterLayout {
  std::uint16_t pods = 3;                ///< node numbers 1..pods, every shard replicated on each
  std::uint32_t replication_factor = 0;  ///< 0: no manager; else the manager's replication_factor
  std::uint16_t base_port = 9501;        ///< pod N listens on 127.0.0.1:(base_port + N - 1)
  std::string data_dir = "kv-data";      ///< pod N's WAL and snapshots under <data_dir>/pod-N/
  std::uint32_t shards = 1024;           ///< the fronts' `shards`
  /// Pod N's telemeter port is metrics_ports[N - 1] when it is there and not 0, else its
  /// network port + 100 (`elfin kv cluster start` picks a free one when that is taken).
  std::vector<std::uint16_t> metrics_ports{};
  std::uint16_t manager_metrics_port = 0;  ///< the manager's; 0: its network port + 100
  /// Mount the telemeter and the dumper (false: nodes sharing one process, as tests run them).
  bool observability = true;
  /// Dump every message (with `observability`).
  bool dumping = false;
  /// Each pod's `[system.runtime] workers`; 0: not set (the runtime's default, one per core).
  std::uint32_t workers = 0;
  /// Each pod's WAL actors (`[wal] wal_count`). One log per pod: the pods of a machine share its
  /// disk, and one log syncs more entries per fdatasync than two taking turns (`elfin kv cluster
  /// start` keeps the count an existing pod's WAL was created with).
  std::uint32_t wal_count = 1;

  /// Where node `node` (a pod or kManagerNode) serves /metrics: its telemeter's port.
  [[nodiscard]] std::uint16_t metrics_port(std::uint16_t node) const;

  /// "tcp://127.0.0.1:<port>" of every pod, in node order.
  [[nodiscard]] std::vector<std::string> addresses() const;
  /// The manager's "tcp://127.0.0.1:<base_port - 1>".
  [[nodiscard]] std::string manager_address() const;
};

/// pod-<node>.toml: the pod's topology (its config file is pod-<node>.config.toml next to it).
[[nodiscard]] std::string pod_topology(const ClusterLayout& layout, std::uint16_t node);
/// pod-<node>.config.toml.
[[nodiscard]] std::string pod_config(const ClusterLayout& layout, std::uint16_t node);
/// manager.toml and manager.config.toml (with a replication factor only).
[[nodiscard]] std::string manager_topology(const ClusterLayout& layout);
[[nodiscard]] std::string manager_config(const ClusterLayout& layout);

}  // namespace elfin::kv
