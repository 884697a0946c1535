// KvWorkload: the history side of a fault run against a live KV cluster. N client threads, each
// with its own elfin::kv::Client (a light node of its own: a client serves one call at a time),
// run a random mix of put, get, cas, delete and delete_if_version over a small key set until
// stopped; every operation's invocation, completion and result is recorded through
// libs/linearizability's Recorder. What a client answer means for the history:
//
//   a value, or VersionMismatch     the operation's output (a mismatch carries the current
//                                   version only: KvOutput::mismatch_version)
//   Timeout                         unknown: pending, it may have applied (a read: left out)
//   Unavailable                     not applied: left out (what the service promises; the
//                                   check holds it to that)
//   anything else                   a problem of the run
//
// Then `final_reads` reads every key once more (linearizably, recorded too) and reports any
// acknowledged write whose version is above what the key shows, and `history()` goes to the
// checker (per key, KvModel).
//
//   elfin::test::KvWorkload load({.pods = cluster.pods(), .clients = 4, .keys = keys, .seed = 7});
//   load.start();
//   REQUIRE(load.progress(100, 30s));   // ... inject a fault, wait for progress again ...
//   load.stop();
//   load.final_reads(30s);
//   auto result = lin::check(lin::KvModel{}, load.history(), {.timeout = 60s});
//
// PartitionStatusProbe finds a shard's leader and a replica's membership from outside: a light
// node asking each pod's partition group for GetPartitionStatus.
//
// Thread safety: a KvWorkload and a probe are driven by one thread; the workload's threads are
// its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/kv_model.hpp>
#include <elfin/linearizability/recorder.hpp>

namespace elfin::test {

using KvHistory = linearizability::History<linearizability::KvInput, linearizability::KvOutput>;

struct KvWorkloadOptions {
  std::vector<std::string> pods{};
  std::size_t clients = 4;
  std::vector<std::string> keys{};
  std::uint64_t seed = 1;
  /// The clients' node numbers: first_node, first_node + 1, ...
  std::uint16_t first_node = 60100;
  /// Each call's deadline (ClientOptions::timeout).
  std::chrono::milliseconds call_timeout{8000};
};

struct KvWorkloadStats {
  std::size_t operations = 0;  ///< answered or not, reads included
  std::size_t acknowledged_writes = 0;
  std::size_t unknown = 0;      ///< Timeout on a write
  std::size_t unavailable = 0;  ///< Unavailable (nothing applied)
  std::size_t mismatches = 0;
  std::size_t failed_reads = 0;
  std::vector<std::string> problems;  ///< unexpected answers, clients that did not connect, lost writes
};

class KvWorkload {
 public:
  explicit KvWorkload(KvWorkloadOptions options);
  ~KvWorkload();
  KvWorkload(const KvWorkload&) = delete;
  KvWorkload& operator=(const KvWorkload&) = delete;

  /// Starts the client threads.
  void start();
  /// Waits until `more` further operations got an answer that is not an error (or `timeout`).
  [[nodiscard]] bool progress(std::size_t more, std::chrono::milliseconds timeout);
  /// Stops the client threads (each finishes its call in flight).
  void stop();
  /// After `stop`: reads every key through a fresh client (retrying until `timeout`), records the
  /// reads, and notes a key that cannot be read or an acknowledged write the read does not cover.
  void final_reads(std::chrono::milliseconds timeout);

  [[nodiscard]] KvHistory history() const { return recorder_.history(); }
  [[nodiscard]] KvWorkloadStats stats() const;

 private:
  void client_loop(std::size_t index);
  void problem(std::string text);

  KvWorkloadOptions options_;
  linearizability::Recorder<linearizability::KvInput, linearizability::KvOutput> recorder_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> answered_{0};
  std::atomic<std::size_t> operations_{0};
  std::atomic<std::size_t> acknowledged_{0};
  std::atomic<std::size_t> unknown_{0};
  std::atomic<std::size_t> unavailable_{0};
  std::atomic<std::size_t> mismatches_{0};
  std::atomic<std::size_t> failed_reads_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> problems_;
  std::vector<std::pair<std::string, std::uint64_t>> acked_;  // (key, version) of every acknowledged write
};

class PartitionStatusProbe {
 public:
  /// A light node (number `node`) connected to the pods.
  PartitionStatusProbe(std::vector<std::string> pods, std::uint16_t node);
  ~PartitionStatusProbe();
  PartitionStatusProbe(const PartitionStatusProbe&) = delete;
  PartitionStatusProbe& operator=(const PartitionStatusProbe&) = delete;

  /// The pod whose replica of `shard` says it leads, once one does (0: none within `timeout`).
  [[nodiscard]] std::uint16_t leader(std::uint64_t shard, std::chrono::milliseconds timeout);
  /// The voters pod `pod`'s replica of `shard` has, sorted (empty: none, or no answer within 1 s).
  [[nodiscard]] std::vector<std::uint64_t> voters(std::uint16_t pod, std::uint64_t shard);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace elfin::test
