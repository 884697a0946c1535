// The local KV cluster: its pods as `elfin run` processes on loopback, started and stopped by one
// command each (`elfin kv cluster start|stop --dir DIR`).
//
// DIR holds everything: the pod files (cluster_files.hpp), each pod's data (DIR/pod-N/), log
// (DIR/pod-N.log) and pid file (DIR/pod-N.pid), and `pods` (the pods' addresses, one a line, which
// the `elfin kv` client commands read). Starting spawns one process per pod running `program run
// DIR/pod-N.toml`, detached into its own session, and waits until each listens; a pod already
// running (its pid file names a live process) is left alone. Stopping sends SIGTERM, waits for the
// process to exit (SIGKILL after `stop_timeout`) and removes the pid file. The data stays, so a
// cluster started again on the same DIR has every acknowledged write.
//
// Observability: each node serves Prometheus /metrics on a loopback port (its network port + 100,
// or a free one when that is taken), listed in DIR/metrics ("pod-N 127.0.0.1:PORT" a line) and in
// DIR/prometheus-targets.json (for Prometheus's file_sd_configs), and dumps every message to
// DIR/pod-N/pod-N.dump (the manager to DIR/manager.dump).
//
// With a replication factor the cluster has a shard manager (DIR/manager.toml, its log
// DIR/manager.log, pid file DIR/manager.pid, state DIR/manager.state), started before the pods
// and stopped after them. Starting again with more pods on the same DIR adds pods: the manager
// gives them their share of the replicas. Removing a pod (`elfin kv cluster remove --pod N`) is
// graceful: the pod leaves (kv.Leave: out of the manager's map), the partitions' leaders move
// its replicas to the other pods by membership changes while it keeps serving, and once it holds
// none it is stopped. Start the cluster again with a smaller --count to keep it out (a pod
// started again registers and gets replicas again).
//
// Thread safety: one call at a time per DIR.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <elfin/kv/cluster_files.hpp>
#include <elfin/result.hpp>

namespace elfin::kv {

struct ClusterOptions {
  std::string dir = "elfin-kv";  ///< everything goes here (created)
  std::uint16_t pods = 3;
  std::uint16_t base_port = 9501;
  std::uint32_t shards = 1024;  ///< the fronts' `shards` (fixed once data is written)
  /// 0: no manager, every pod holds every shard; else a shard manager places each shard on this
  /// many pods (fixed for a DIR: start it again with the same value).
  std::uint32_t replication_factor = 0;
  std::string program;   ///< the `elfin` binary to run the pods with ("": this process's own)
  bool dumping = false;  ///< every node dumps every message (cluster_files.hpp)
  /// Each pod's worker threads; 0: this machine's cores shared among the pods (cores / pods, at
  /// least one), as the pods of a local cluster share its cores.
  std::uint32_t workers = 0;
  std::chrono::milliseconds start_timeout{15'000};
  std::chrono::milliseconds stop_timeout{15'000};
};

struct PodProcess {
  std::uint16_t node = 0;
  int pid = 0;
  std::string address;  ///< tcp://127.0.0.1:PORT
  bool already_running = false;
  std::string metrics;  ///< 127.0.0.1:PORT of its telemeter: GET /metrics there
};

/// Writes the pod files only (pod-N.toml, pod-N.config.toml) into `options.dir`, their data under
/// `data_dir` (as written: a relative one is relative to where the pods run).
/// Each pod's worker threads for `options` (its `workers`, else the machine's cores / pods, at
/// least one).
[[nodiscard]] std::uint32_t pod_workers(const ClusterOptions& options);
[[nodiscard]] Result<void, std::string> write_cluster_files(const ClusterOptions& options, const std::string& data_dir);
/// Writes the files, starts the pods not running yet, waits until every pod listens.
[[nodiscard]] Result<std::vector<PodProcess>, std::string> start_cluster(const ClusterOptions& options);
/// Stops every pod whose pid file is in `options.dir`; the pods stopped.
[[nodiscard]] Result<std::vector<PodProcess>, std::string> stop_cluster(const ClusterOptions& options);
struct RemovedPod {
  std::uint16_t node = 0;
  int pid = 0;
  std::uint64_t epoch = 0;  ///< the manager's map the pod left at
  std::uint32_t shards_checked = 0;
  std::chrono::milliseconds moved_after{0};  ///< from the Leave until it held no replica
};

/// Removes pod `pod` of the cluster in `options.dir` gracefully (with a manager): Leave, then
/// waits until none of the `shards` (the pod's config's) has a replica on it that counts the pod
/// as a member (asking its partition group, GetPartitionStatus), up to `timeout`; then stops it
/// (SIGTERM). The error says what did not happen.
[[nodiscard]] Result<RemovedPod, std::string> remove_pod(const ClusterOptions& options, std::uint16_t pod,
                                                         std::chrono::milliseconds timeout);
/// The addresses a started cluster in `dir` wrote to DIR/pods.
[[nodiscard]] Result<std::vector<std::string>, std::string> cluster_addresses(const std::string& dir);

}  // namespace elfin::kv
