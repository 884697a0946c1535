// Three (or more) elfin nodes in one process, connected by the network battery over loopback TCP,
// each with its own WAL actors in a temporary directory and the partition group; the test talks
// to each node's partition group through that node's proxy, by the group's address (the proxy's
// subject is the WAL group, which sends nothing of its own: a subject's every outgoing message
// also goes to the proxy, and the partitions' WAL requests would fill its mailbox). A node can be stopped (its system
// ends: its actors are gone, its files stay) and started again on the same directories.
//
// Every node's state machines are KV state machines that also record what they apply, so a test
// can compare the replicas' apply order. A test may give its own topology per node instead (the KV
// tests mount the shipped pod topology, with the KV front) and more config sections; the network,
// WAL and partition config, the start and stop of nodes and the leader lookup stay the same.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/partition.hpp>
#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "../network/network_test_config.hpp"
#include "../temp_dir.hpp"

namespace partition_test {

namespace ap = elfin::actors::partition;
namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using namespace std::chrono_literals;

using elfin::test::eventually;

/// What each (node, partition) applied, in order, across restarts of its actor.
class Applied {
 public:
  struct Record {
    std::uint64_t index = 0;
    std::string value;  ///< the Put's value
  };
  void applied(std::uint16_t node, std::uint64_t partition, std::uint64_t index, std::string value) {
    std::lock_guard lock(mutex_);
    log_[{node, partition}].push_back({index, std::move(value)});
  }
  void restored(std::uint16_t node, std::uint64_t partition) {
    std::lock_guard lock(mutex_);
    ++restores_[{node, partition}];
  }
  [[nodiscard]] std::vector<Record> log(std::uint16_t node, std::uint64_t partition) const {
    std::lock_guard lock(mutex_);
    auto it = log_.find({node, partition});
    return it == log_.end() ? std::vector<Record>{} : it->second;
  }
  [[nodiscard]] std::size_t restores(std::uint16_t node, std::uint64_t partition) const {
    std::lock_guard lock(mutex_);
    auto it = restores_.find({node, partition});
    return it == restores_.end() ? 0 : it->second;
  }
  void forget(std::uint16_t node) {
    std::lock_guard lock(mutex_);
    std::erase_if(log_, [&](const auto& item) { return item.first.first == node; });
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::uint16_t, std::uint64_t>, std::vector<Record>> log_;
  std::map<std::pair<std::uint16_t, std::uint64_t>, std::size_t> restores_;
};

/// A KvStateMachine that tells `Applied` what it applies and restores.
class RecordingKv final : public ap::StateMachine {
 public:
  RecordingKv(std::shared_ptr<Applied> applied, std::uint16_t node, std::uint64_t partition)
      : applied_(std::move(applied)), node_(node), partition_(partition) {}
  ap::Bytes apply(std::uint64_t index, std::span<const std::uint8_t> command) override {
    applied_->applied(node_, partition_, index, pk::decode_kv_command(command).value);
    return kv_.apply(index, command);
  }
  ap::Bytes query(std::span<const std::uint8_t> query) const override { return kv_.query(query); }
  ap::Bytes snapshot() const override { return kv_.snapshot(); }
  void restore(std::span<const std::uint8_t> snapshot) override {
    applied_->restored(node_, partition_);
    kv_.restore(snapshot);
  }

 private:
  std::shared_ptr<Applied> applied_;
  std::uint16_t node_;
  std::uint64_t partition_;
  ap::KvStateMachine kv_;
};

inline ap::Bytes put(std::string key, std::string value) {
  return pk::encode(pk::KvCommand{pk::KvOp::Put, std::move(key), std::move(value), 0});
}
inline ap::Bytes get(std::string key) { return pk::encode(pk::KvCommand{pk::KvOp::Get, std::move(key), {}, 0}); }

struct ClusterOptions {
  std::size_t nodes = 3;
  std::string partition_extra;  ///< more keys of the [partitions] section
  /// Node n's topology; unset: system.network, wal, partitions (RecordingKv) and partitions.peers.
  /// It must have a group "wal" (the proxies' subject) and "system.network".
  std::function<elfin::Topology(std::uint16_t node)> topology{};
  std::string extra_config{};  ///< more config sections (e.g. [kv])
  std::chrono::milliseconds proxy_timeout = 10s;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions options = {}) : options_(std::move(options)) {
    nodes_.resize(options_.nodes);
    for (std::uint16_t n = 1; n <= options_.nodes; ++n) start(n);
    for (std::uint16_t n = 1; n <= options_.nodes; ++n) REQUIRE(connected(n));
  }

  [[nodiscard]] std::vector<std::uint16_t> node_numbers() const {
    std::vector<std::uint16_t> out;
    for (std::uint16_t n = 1; n <= options_.nodes; ++n) out.push_back(n);
    return out;
  }
  [[nodiscard]] bool running(std::uint16_t node) const { return nodes_.at(node - 1) != nullptr; }
  elfin::testing::Proxy& node(std::uint16_t node) { return *nodes_.at(node - 1); }
  Applied& applied() { return *applied_; }

  /// Starts node `n` on its directories, dialing every running node.
  void start(std::uint16_t n) {
    std::vector<std::string> peers;
    for (std::uint16_t other = 1; other <= options_.nodes; ++other) {
      if (other != n && running(other)) peers.push_back(listen_address(other));
    }
    std::string nodes_list;
    for (std::uint16_t other = 1; other <= options_.nodes; ++other) {
      nodes_list += fmt::format("{}{}", nodes_list.empty() ? "" : ", ", other);
    }
    elfin::StartOptions start;
    start.node_no = n;
    start.config_toml =
        elfin::network::test::network_config("127.0.0.1:0", peers) +
        fmt::format(R"(
[wal]
dir = "{}"
wal_count = 2
segment_bytes = "1MiB"
preallocate = false

[partitions]
nodes = [{}]
tick = "20ms"
election_ticks = 20
heartbeat_ticks = 1
snapshot_dir = "{}"
proposal_timeout = "3s"
{}
{}
)",
                    dir_.file(fmt::format("node{}/wal", n)), nodes_list, dir_.file(fmt::format("node{}/snapshots", n)),
                    options_.partition_extra, options_.extra_config);
    elfin::testing::ProxyOptions proxy_options;
    proxy_options.node_no = n;
    proxy_options.timeout = options_.proxy_timeout;
    nodes_.at(n - 1) = std::make_unique<elfin::testing::Proxy>(elfin::testing::proxy(
        options_.topology ? options_.topology(n) : partition_topology(n), "wal", std::move(start), proxy_options));
  }

  /// The default topology of node `n`.
  elfin::Topology partition_topology(std::uint16_t n) {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    auto wal = topology.local("wal");
    wal.mount(elfin::actors::wal::blueprint());
    elfin::network::RemoteGroupOptions front;
    for (std::uint16_t other = 1; other <= options_.nodes; ++other) {
      if (other != n) front.nodes.push_back(other);
    }
    front.remote_name = "partitions";
    front.pick = ap::peer_node;
    auto peers_group = topology.local("partitions.peers");
    peers_group.mount(elfin::network::remote_group(std::move(front)));
    ap::Options options;
    options.state_machine = [applied = applied_, n](std::uint64_t partition) {
      return std::make_unique<RecordingKv>(applied, n, partition);
    };
    auto partitions = topology.local("partitions");
    partitions.mount(ap::blueprint(std::move(options)));
    partitions.route_to(wal, elfin::filters::protocol("wal"));
    partitions.route_to(peers_group, elfin::filters::messages<pr::RaftMessage>());
    return topology;
  }

  /// Node `n`'s snapshot directory (a directory per partition inside, once it holds a replica).
  [[nodiscard]] std::string snapshot_dir(std::uint16_t n) { return dir_.file(fmt::format("node{}/snapshots", n)); }

  /// Stops node `n`: its system terminates; its files stay.
  void stop(std::uint16_t n) { nodes_.at(n - 1).reset(); }

  /// Node `n` is connected to every other running node.
  bool connected(std::uint16_t n) {
    return eventually([&] {
      auto info =
          node(n).request_fallible(elfin::network::GetNetworkInfo{}, node(n).system().group_addr("system.network"));
      if (!info) return false;
      std::size_t want = 0;
      for (std::uint16_t other = 1; other <= options_.nodes; ++other) want += other != n && running(other);
      return info->peers.size() >= want;
    });
  }

  /// A request to node `n`'s partition group.
  template <class R>
  elfin::Result<typename R::Response, elfin::RequestError> ask(std::uint16_t n, R request) {
    return node(n).request_fallible(std::move(request), node(n).system().group_addr("partitions"));
  }

  std::optional<pr::PartitionStatus> status(std::uint16_t n, std::uint64_t partition) {
    auto status = ask(n, pr::GetPartitionStatus{partition});
    if (!status) return std::nullopt;
    return *status;
  }

  /// The node every running replica of `partition` agrees leads it (in one term), once there is one.
  std::optional<std::uint16_t> leader(std::uint64_t partition, std::chrono::milliseconds timeout = 15s) {
    std::optional<std::uint16_t> found;
    eventually(
        [&] {
          found.reset();
          std::optional<std::uint64_t> term;
          std::optional<std::uint64_t> leader;
          for (std::uint16_t n = 1; n <= options_.nodes; ++n) {
            if (!running(n)) continue;
            auto s = status(n, partition);
            if (!s || s->leader == 0) return false;
            if (leader && (*leader != s->leader || *term != s->term)) return false;
            leader = s->leader;
            term = s->term;
          }
          if (!leader || !running(static_cast<std::uint16_t>(*leader))) return false;
          auto s = status(static_cast<std::uint16_t>(*leader), partition);
          if (!s || s->role != pr::Role::Leader) return false;
          found = static_cast<std::uint16_t>(*leader);
          return true;
        },
        timeout);
    return found;
  }

  /// Proposes at `n`; the answer as it came.
  elfin::Result<pr::Proposed, pr::RaftError> propose(std::uint16_t n, std::uint64_t partition, ap::Bytes command) {
    auto answer = ask(n, pr::Propose{partition, std::move(command)});
    if (!answer) {
      return elfin::Err{pr::RaftError{pr::RaftErrorKind::Unavailable, partition, 0, elfin::to_string(answer.error())}};
    }
    return std::move(*answer);
  }

  /// A read at node `n`; an unanswered request is an Unavailable error here.
  elfin::Result<pr::ReadResult, pr::RaftError> read(std::uint16_t n, std::uint64_t partition, ap::Bytes query,
                                                    bool stale = false) {
    auto answer = ask(n, pr::Read{partition, std::move(query), stale});
    if (!answer) {
      return elfin::Err{pr::RaftError{pr::RaftErrorKind::Unavailable, partition, 0, elfin::to_string(answer.error())}};
    }
    return std::move(*answer);
  }

  /// Every running replica of `partition` applied at least `index`.
  bool all_applied(std::uint64_t partition, std::uint64_t index, std::chrono::milliseconds timeout = 15s) {
    return eventually(
        [&] {
          for (std::uint16_t n = 1; n <= options_.nodes; ++n) {
            if (!running(n)) continue;
            auto s = status(n, partition);
            if (!s || s->applied < index) return false;
          }
          return true;
        },
        timeout);
  }

 private:
  std::string listen_address(std::uint16_t n) {
    auto info =
        node(n).request_fallible(elfin::network::GetNetworkInfo{}, node(n).system().group_addr("system.network"));
    if (!info || info->listening.empty()) FAIL("node " << n << " listens nowhere");
    return info->listening.front();
  }

  ClusterOptions options_;
  elfin::test::TempDir dir_;
  std::shared_ptr<Applied> applied_ = std::make_shared<Applied>();
  std::vector<std::unique_ptr<elfin::testing::Proxy>> nodes_;
};

}  // namespace partition_test
