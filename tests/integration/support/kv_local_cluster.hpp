// KvLocalCluster: the KV service's local cluster as users run it (`elfin kv cluster start|stop`,
// three `elfin run` pods on loopback, free ports, a temporary directory), for tests and fault
// runs: start it, signal a pod (kill -9, SIGTERM, SIGSTOP/SIGCONT), start the pods that are not
// running again, and wait until a pod serves. The destructor resumes stopped pods and stops the
// cluster, so a failing test leaves no process behind.
//
//   elfin::test::KvLocalCluster cluster({.shards = 16});
//   REQUIRE(cluster.started().code == 0);
//   cluster.signal(2, SIGKILL);
//   REQUIRE(cluster.start_again().code == 0);
//   CHECK(cluster.serves(2, 20s));
//
// Thread safety: one thread drives a cluster (pods may be served by other threads' clients).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <elfin/kv/client.hpp>
#include <elfin/result.hpp>

#include "temp_dir.hpp"

namespace elfin::test {

/// A client of `pods` (pod 1 first) joining as light node `node` (unique in the cluster), each call
/// waiting up to `timeout`; the error says why no pod could be connected.
[[nodiscard]] Result<kv::Client, std::string> kv_client(const std::vector<std::string>& pods, std::uint16_t node,
                                                        std::chrono::milliseconds timeout = std::chrono::seconds(20));

/// What a command printed and how it ended.
struct CliRun {
  int code = -1;  ///< -1: killed by a signal or still running at the deadline
  std::string out;
  std::string err;
};

/// `elfin <args>` (this build's binary), waited for up to `timeout`.
[[nodiscard]] CliRun elfin_cli(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(60));

/// The process has exited (it may linger as a zombie until its parent, init, reaps it).
[[nodiscard]] bool process_gone(int pid);

struct KvLocalClusterOptions {
  std::uint16_t pods = 3;
  /// The fronts' shard count: a scan over every shard creates every shard's Raft group on each
  /// pod, so tests use fewer than the shipped 1024.
  std::uint32_t shards = 128;
  /// 0: no manager (every pod holds every shard); else `--replication-factor`: a shard manager
  /// node on the port below pod 1's places each shard on this many pods.
  std::uint32_t replication_factor = 0;
  /// Free ports kept after the pods' for pods added later (`add_pod`).
  std::uint16_t spare_pods = 0;
  /// `--dump`: every pod dumps every message.
  bool dump = false;
};

class KvLocalCluster {
 public:
  /// Starts the cluster on free loopback ports (a few attempts when a port was taken meanwhile).
  explicit KvLocalCluster(KvLocalClusterOptions options = {});
  ~KvLocalCluster();
  KvLocalCluster(const KvLocalCluster&) = delete;
  KvLocalCluster& operator=(const KvLocalCluster&) = delete;

  /// How `elfin kv cluster start` went (code 0: every pod listens).
  [[nodiscard]] const CliRun& started() const { return started_; }
  [[nodiscard]] std::string dir() const { return dir_.path().string(); }
  [[nodiscard]] std::uint16_t size() const { return options_.pods; }
  [[nodiscard]] std::uint32_t shards() const { return options_.shards; }
  /// The pods' addresses, pod 1 first.
  [[nodiscard]] std::vector<std::string> pods() const;
  /// The pid of pod `pod` (from its pid file; 0 if there is none).
  [[nodiscard]] int pid(std::uint16_t pod) const;
  /// Sends `signo` to pod `pod`; false if it has no pid or the signal could not be sent.
  bool signal(std::uint16_t pod, int signo);
  /// Sends SIGTERM to pod `pod` and waits until it has exited.
  [[nodiscard]] bool stop_pod(std::uint16_t pod, std::chrono::milliseconds timeout);
  /// `elfin kv cluster stop`.
  CliRun stop();
  /// `elfin kv cluster start` on the same directory and ports: starts the pods not running.
  CliRun start_again();
  /// One pod more (`elfin kv cluster start` with a larger --count; needs a spare port).
  CliRun add_pod();
  /// With a manager: `elfin kv cluster remove --pod N` (it leaves, its replicas move off, it stops).
  CliRun remove_pod(std::uint16_t pod, std::chrono::seconds timeout = std::chrono::seconds(60));
  /// With a manager: its address, and `elfin shard --assignments` asking it.
  [[nodiscard]] std::string manager_address() const;
  CliRun assignments();
  /// Per pod (kv-pod-N) the replica count the manager's map gives it (empty: no answer).
  [[nodiscard]] std::map<std::string, int> replica_counts();
  /// Sends `signo` to the shard manager node; false if it has no pid or the signal could not be
  /// sent (`start_again` starts a manager that is not running).
  bool signal_manager(int signo);
  /// `elfin kv <args> --dir DIR`.
  CliRun kv(std::vector<std::string> args);
  /// Waits until pod `pod` answers a read through a client connected to it alone (a stale read
  /// of `key`: its own replica answers, no leader needed).
  [[nodiscard]] bool serves(std::uint16_t pod, std::chrono::milliseconds timeout, const std::string& key = "probe");

 private:
  [[nodiscard]] std::vector<std::string> start_args() const;

  KvLocalClusterOptions options_;
  TempDir dir_;
  std::uint16_t base_port_ = 0;
  CliRun started_;
  bool stopped_ = false;
  std::uint16_t next_probe_node_ = 60900;
};

}  // namespace elfin::test
