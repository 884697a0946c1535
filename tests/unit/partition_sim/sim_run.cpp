// The partition sim's driver (see sim_run.hpp).
#include "sim_run.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/kv.hpp>
#include <elfin/actors/partition.hpp>
#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/elfin.hpp>
#include <elfin/linearizability/checker.hpp>
#include <elfin/linearizability/recorder.hpp>
#include <elfin/protocols/kv.hpp>
#include <elfin/protocols/kv/command.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/testing/sim_cluster.hpp>

#include "../kv_answer.hpp"
#include "../temp_dir.hpp"
#include "partition_node.hpp"
#include "register_map.hpp"

namespace psim {

namespace {

namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using namespace std::chrono_literals;
using Nanos = std::chrono::nanoseconds;
using elfin::testing::SimCluster;
using elfin::testing::SimNode;
using elfin::testing::SimRequest;
using KvRecorder = lin::Recorder<lin::KvInput, lin::KvOutput>;

constexpr std::uint16_t kNodes = 3;
/// Placement runs: one node more than the replicas of a partition, so a replica can move.
constexpr std::uint16_t kPlacementNodes = 4;
constexpr std::uint64_t kPartitions = 2;
constexpr std::uint64_t kKeysPerPartition = 3;
/// A client gives up on a request after this (virtual) time; the proposal timeout is 1 s, the
/// front's request timeout 2 s.
constexpr Nanos kClientTimeout = 3s;

/// The pods' front: the two partitions are its shards.
constexpr const char* kFrontConfig = R"(
[kv]
nodes = [1, 2, 3]
shards = 2
request_timeout = "2s"
retry_interval = "20ms"
)";

elfin::testing::SimClusterOptions cluster_options(std::uint64_t seed, const elfin::test::TempDir& root, bool front,
                                                  bool placement = false) {
  elfin::testing::SimClusterOptions options;
  options.nodes = placement ? kPlacementNodes : kNodes;
  options.seed = seed;
  options.disk_root = root.path();
  options.config = [front, placement](const SimNode& node) {
    return fmt::format(R"(
[wal]
dir = "{}"
wal_count = 2
segment_bytes = "256KiB"
preallocate = false

[partitions]
{}
tick = "10ms"
election_ticks = 10
heartbeat_ticks = 1
quiesce_after_ticks = 3
snapshot_dir = "{}-snapshots"
snapshot_every = 40
proposal_timeout = "1s"
{}
)",
                       node.disk().dir(), placement ? "placement = \"assignment\"" : "nodes = [1, 2, 3]",
                       node.disk().dir(), front ? kFrontConfig : "");
  };
  return options;
}

/// The service's KV state machine, telling the AppliedLog what it applies.
class RecordingKv final : public ap::StateMachine {
 public:
  RecordingKv(std::shared_ptr<AppliedLog> log, std::uint16_t node, std::uint64_t partition)
      : log_(std::move(log)), node_(node), partition_(partition) {}
  ap::Bytes apply(std::uint64_t index, std::span<const std::uint8_t> command) override {
    log_->applied(node_, partition_, index, command);
    return kv_.apply(index, command);
  }
  [[nodiscard]] ap::Bytes query(std::span<const std::uint8_t> query) const override { return kv_.query(query); }
  [[nodiscard]] ap::Bytes snapshot() const override { return kv_.snapshot(); }
  void restore(std::span<const std::uint8_t> snapshot) override {
    log_->restored();
    kv_.restore(snapshot);
  }

 private:
  std::shared_ptr<AppliedLog> log_;
  std::uint16_t node_;
  std::uint64_t partition_;
  ap::KvStateMachine kv_;
};

elfin::Topology node_topology(SimNode& node, const std::shared_ptr<AppliedLog>& applied, bool with_front,
                              std::uint16_t nodes = kNodes) {
  elfin::Topology topology;
  ap::Options options;
  options.state_machine = [applied, n = node.node_no(),
                           with_front](std::uint64_t partition) -> std::unique_ptr<ap::StateMachine> {
    if (with_front) return std::make_unique<RecordingKv>(applied, n, partition);
    return std::make_unique<RegisterMap>(applied, n, partition);
  };
  mount_partition_node(topology, node, nodes, std::move(options));
  auto partitions = topology.local("partitions");
  if (with_front) {  // as the shipped pod topology mounts it (services/kv's cluster files)
    elfin::testing::SimRemoteGroupOptions fronts;
    for (std::uint16_t n = 1; n <= kNodes; ++n) fronts.nodes.push_back(n);
    fronts.remote_name = "kv";
    fronts.pick = elfin::actors::kv::shard_request_node;
    auto kv_peers = topology.local("kv.peers");
    kv_peers.mount(elfin::testing::sim_remote_group(std::move(fronts)));
    auto kv = topology.local("kv");
    kv.mount(elfin::actors::kv::blueprint());
    kv.route_to(partitions, elfin::filters::messages<pr::Propose, pr::Read>());
    kv.route_to(kv_peers, elfin::filters::messages<pk::ShardRequest>());
  }
  return topology;
}

/// The keys of each partition: named after it for the partitions themselves; through the front,
/// keys the front's hash puts in that shard.
std::vector<std::vector<std::string>> key_names(bool front) {
  std::vector<std::vector<std::string>> keys(kPartitions);
  for (std::uint64_t p = 0; p < kPartitions; ++p) {
    for (std::uint64_t i = 0; keys[p].size() < kKeysPerPartition; ++i) {
      std::string key = front ? fmt::format("k{}", i) : fmt::format("p{}k{}", p, i);
      if (!front || elfin::actors::kv::shard_of(key, kPartitions) == p) keys[p].push_back(std::move(key));
    }
  }
  return keys;
}

class Driver {
 public:
  Driver(const RunOptions& options, SimCluster& cluster, RunResult& result)
      : options_(options),
        cluster_(cluster),
        result_(result),
        recorder_([this] { return ++clock_; }),
        keys_(key_names(options.front)),
        nodes_(options.placement ? kPlacementNodes : kNodes) {
    if (options.placement) {
      if (options.front) throw std::invalid_argument("placement runs talk to the partitions, not the front");
      // Node 4 is spare at first; the owner (first) is node 1.
      for (auto& replicas : table_) replicas = {1, 2, 3};
    }
    for (std::size_t i = 0; i < options.clients; ++i) {
      Client c;
      c.record = &recorder_.client();
      for (std::uint64_t p = 0; p < kPartitions; ++p) c.target[p] = pick_node();
      if (options.front) c.front = pick_node();  // (a partition run draws as it always did)
      clients_.push_back(std::move(c));
    }
    next_fault_ = 50ms;
  }

  void run() {
    if (options_.placement) publish();
    // The faulty phase: every client keeps one operation in flight until enough were started.
    Nanos instant{-1};
    std::size_t rounds_at_instant = 0;
    while (started_ < options_.operations || in_flight() > 0) {
      if (cluster_.now() > 120s) throw std::runtime_error("the run does not finish (livelock?)");
      // Requests refused at once take no virtual time: clients retrying without a pause would
      // go on at one instant, the history growing with every attempt.
      rounds_at_instant = cluster_.now() == instant ? rounds_at_instant + 1 : 0;
      instant = cluster_.now();
      if (rounds_at_instant > 10'000)
        throw std::runtime_error("the run does not advance (clients retrying at one instant)");
      for (Client& c : clients_) {
        if (!c.op && started_ < options_.operations && cluster_.now() >= c.not_before) start(c);
      }
      cluster_.run_until([&] { return any_done(); }, 5ms);
      harvest();
      if (options_.faults) faults();
    }
    heal();
    // Time for elections and catch-up, then one linearizable read of every key.
    cluster_.advance(1s);
    final_reads();
    if (options_.placement) check_memberships();
  }

 private:
  struct InFlight {
    KvRecorder::Ticket ticket;
    lin::KvInput input;
    std::uint64_t partition = 0;
    std::uint16_t node = 0;
    Nanos started{0};
    std::variant<SimRequest<elfin::Result<pr::Proposed, pr::RaftError>>,
                 SimRequest<elfin::Result<pr::ReadResult, pr::RaftError>>,
                 // through the front: Get; Put and Cas; Delete and DeleteIfVersion
                 SimRequest<elfin::Result<pk::Found, pk::KvError>>, SimRequest<elfin::Result<pk::Written, pk::KvError>>,
                 SimRequest<elfin::Result<pk::Deleted, pk::KvError>>>
        request;
  };
  struct Client {
    KvRecorder::Client* record = nullptr;
    std::optional<InFlight> op;
    std::uint16_t target[kPartitions] = {};
    std::uint16_t front = 0;                    // the node whose front it asks (front runs)
    std::map<std::string, std::uint64_t> seen;  // the last version this client saw per key
    std::uint64_t seq = 0;
    Nanos not_before{0};  // after a refusal, the client waits a little before it tries again
    // The nodes that refused it at one instant (a bit per node), per partition, and that instant.
    std::uint32_t refused_by[kPartitions] = {};
    Nanos refused_at[kPartitions] = {Nanos(-1), Nanos(-1)};
  };

  std::uint16_t pick_node() { return static_cast<std::uint16_t>(1 + cluster_.random().below(nodes_)); }
  /// A node that is up (a client of the front asks one it can reach).
  std::uint16_t pick_up_node() {
    for (;;) {
      const std::uint16_t node = pick_node();
      if (cluster_.is_up(node)) return node;
    }
  }

  [[nodiscard]] std::size_t in_flight() const {
    return static_cast<std::size_t>(
        std::count_if(clients_.begin(), clients_.end(), [](const Client& c) { return c.op.has_value(); }));
  }

  [[nodiscard]] bool done(const InFlight& op) const {
    if (cluster_.now() - op.started > kClientTimeout) return true;
    return std::visit([](const auto& r) { return r.done(); }, op.request);
  }
  [[nodiscard]] bool any_done() const {
    return std::any_of(clients_.begin(), clients_.end(), [&](const Client& c) { return c.op && done(*c.op); });
  }

  lin::KvInput choose(Client& c, std::uint64_t partition) {
    auto& r = cluster_.random();
    const std::string key = keys_[partition][r.below(kKeysPerPartition)];
    const std::string value = fmt::format("c{}.{}", c.record->id(), ++c.seq);
    auto seen = c.seen.find(key);
    // An expected version: the one this client last saw (often current), now and then 0 or a stale one.
    std::uint64_t expected = seen == c.seen.end() ? 0 : seen->second;
    if (r.below(5) == 0) expected = r.below(2) == 0 ? 0 : expected / 2;
    const std::uint64_t kind = r.below(100);
    if (kind < 35) return lin::KvInput::get(key);
    if (kind < 65) return lin::KvInput::put(key, value);
    if (kind < 82) return lin::KvInput::cas(key, expected, value);
    if (kind < 92) return lin::KvInput::del(key);
    return lin::KvInput::delete_if_version(key, std::max<std::uint64_t>(expected, 1));
  }

  void start(Client& c) {
    const std::uint64_t partition = cluster_.random().below(kPartitions);
    send(c, partition, choose(c, partition));
    ++started_;
  }

  void send(Client& c, std::uint64_t partition, lin::KvInput input) {
    if (options_.front) return send_to_front(c, partition, std::move(input));
    const std::uint16_t node = c.target[partition];
    auto ticket = c.record->invoke(input);
    if (input.call == lin::KvCall::Get) {
      const bool stale = options_.stale_reads && !healed_;
      const std::uint16_t at = stale ? pick_node() : node;
      auto request = cluster_.request(at, "partitions", pr::Read{partition, encode(input), stale});
      c.op.emplace(InFlight{ticket, std::move(input), partition, node, cluster_.now(), std::move(request)});
    } else {
      auto request = cluster_.request(node, "partitions", pr::Propose{partition, encode(input)});
      c.op.emplace(InFlight{ticket, std::move(input), partition, node, cluster_.now(), std::move(request)});
    }
  }

  void send_to_front(Client& c, std::uint64_t partition, lin::KvInput input) {
    if (!cluster_.is_up(c.front)) c.front = pick_up_node();
    const std::uint16_t node = c.front;
    auto ticket = c.record->invoke(input);
    const auto in_flight = [&](auto request) {
      c.op.emplace(InFlight{ticket, input, partition, node, cluster_.now(), std::move(request)});
    };
    switch (input.call) {
      case lin::KvCall::Get:
        return in_flight(cluster_.request(node, "kv", pk::Get{input.key, false}));
      case lin::KvCall::Put:
        return in_flight(cluster_.request(node, "kv", pk::Put{input.key, input.value}));
      case lin::KvCall::Cas:
        return in_flight(cluster_.request(node, "kv", pk::Cas{input.key, input.value, input.expected_version}));
      case lin::KvCall::Delete:
        return in_flight(cluster_.request(node, "kv", pk::Delete{input.key}));
      case lin::KvCall::DeleteIfVersion:
        return in_flight(cluster_.request(node, "kv", pk::DeleteIfVersion{input.key, input.expected_version}));
    }
  }

  /// Closes a front client's operation.
  void finish_front(Client& c, InFlight op) {
    const bool read = op.input.call == lin::KvCall::Get;
    const bool answered = std::visit([](const auto& r) { return r.done(); }, op.request);
    elfin::test::KvAnswer answer{elfin::test::KvAnswer::Kind::Unknown, std::nullopt, {}};
    bool reached = answered;
    if (answered) {
      std::visit(
          [&](auto& request) {
            auto result = request.result();
            if (!result) {
              reached = false;  // the node went down with the request
              return;
            }
            if constexpr (requires { elfin::test::kv_answer(op.input, *result); }) {
              answer = elfin::test::kv_answer(op.input, *result);
            }
          },
          op.request);
    } else {
      ++result_.stats.late;  // the front's deadline passed long ago, and no answer
    }
    switch (answer.kind) {
      case elfin::test::KvAnswer::Kind::Output:
        result_.stats.mismatches += answer.output->status == lin::KvStatus::Mismatch;
        break;
      case elfin::test::KvAnswer::Kind::Unknown:
        result_.stats.timeouts += reached;
        break;
      case elfin::test::KvAnswer::Kind::NotApplied:
        ++result_.stats.unavailable;
        break;
      case elfin::test::KvAnswer::Kind::Unexpected:
        result_.problems.push_back(answer.unexpected);
        break;
    }
    const std::optional<lin::KvOutput>& out = answer.output;
    const bool may_have_applied = answer.kind == elfin::test::KvAnswer::Kind::Unknown;
    if (read) ++result_.stats.reads;
    if (!reached) c.front = pick_up_node();
    if (out) {
      if (out->status == lin::KvStatus::Ok &&
          (op.input.call == lin::KvCall::Put || op.input.call == lin::KvCall::Cas)) {
        ++result_.stats.acknowledged_writes;
        acknowledged_[op.input.key] = std::max(acknowledged_[op.input.key], out->version);
      }
      remember(c, op.input, *out);
      c.record->ok(op.ticket, *out);
      return;
    }
    if (read || (reached && !may_have_applied)) {
      // A read has no effect; a write the front refused was not applied: neither is history.
      c.record->failed(op.ticket);
      c.not_before = cluster_.now() + std::chrono::milliseconds(10 + cluster_.random().below(40));
      --started_;
      return;
    }
    unknown(c, op);
  }

  void remember(Client& c, const lin::KvInput& input, const lin::KvOutput& out) {
    if (out.version != 0) c.seen[input.key] = out.version;
  }

  /// Where to go next after an error: the hint if it names a node, else another node after a
  /// pause (an election may be under way). A refused operation does not count as started.
  /// A hint back to a node that refused this client at this very instant counts as none: a
  /// request injected into a node is answered without any virtual time passing, and two replicas
  /// can name each other for a moment (one still believes in a leader that went down, the other
  /// knows none and names the owner), which a client would otherwise follow forever.
  void retarget(Client& c, std::uint64_t partition, std::uint64_t hint) {
    if (c.refused_at[partition] != cluster_.now()) {
      c.refused_at[partition] = cluster_.now();
      c.refused_by[partition] = 0;
    }
    c.refused_by[partition] |= 1U << c.target[partition];
    const bool circle = hint < 32 && (c.refused_by[partition] & (1U << hint)) != 0;
    if (hint >= 1 && hint <= nodes_ && !circle) {
      c.target[partition] = static_cast<std::uint16_t>(hint);
    } else {
      c.target[partition] = pick_node();
      c.not_before = cluster_.now() + std::chrono::milliseconds(10 + cluster_.random().below(40));
    }
  }

  /// Closes the client's operation: answered, refused (not in the history) or unknown (pending).
  void finish(Client& c) {
    if (!c.op) return;
    InFlight op = std::move(*c.op);
    c.op.reset();
    if (options_.front) return finish_front(c, std::move(op));
    const bool timed_out = !std::visit([](const auto& r) { return r.done(); }, op.request);
    if (timed_out) return unknown(c, op);
    if (auto* read = std::get_if<1>(&op.request)) {
      auto answer = read->result();
      ++result_.stats.reads;
      if (!answer || !*answer) {
        // A read has no effect: one that failed is simply not part of the history.
        c.record->failed(op.ticket);
        retarget(c, op.partition, answer ? answer->error().leader_hint : 0);
        --started_;
        return;
      }
      const lin::KvOutput out = decode_output((*answer)->response);
      remember(c, op.input, out);
      c.record->ok(op.ticket, out);
      return;
    }
    auto answer = std::get<0>(op.request).result();
    if (!answer) return unknown(c, op);  // the node went down or the network lost it
    if (!*answer) {
      const pr::RaftError& error = answer->error();
      if (error.kind == pr::RaftErrorKind::NotLeader) {  // refused before anything was proposed
        ++result_.stats.not_leader;
        c.record->failed(op.ticket);
        retarget(c, op.partition, error.leader_hint);
        --started_;
        return;
      }
      retarget(c, op.partition, 0);
      return unknown(c, op);  // Dropped, Timeout, ShuttingDown, Unavailable: it may have applied
    }
    const lin::KvOutput out = decode_output((*answer)->response);
    if (out.status == lin::KvStatus::Ok && (op.input.call == lin::KvCall::Put || op.input.call == lin::KvCall::Cas)) {
      ++result_.stats.acknowledged_writes;
      acknowledged_[op.input.key] = std::max(acknowledged_[op.input.key], out.version);
    }
    last_leader_[op.partition] = op.node;
    remember(c, op.input, out);
    c.record->ok(op.ticket, out);
  }

  void unknown(Client& c, const InFlight& op) {
    ++result_.stats.unknown;
    c.record->unknown(op.ticket);
    // As Knossos has it: a client with an operation in limbo is gone; a new one takes its place.
    KvRecorder::Client* fresh = &recorder_.client();
    c.record = fresh;
  }

  void harvest() {
    for (Client& c : clients_) {
      if (c.op && done(*c.op)) finish(c);
    }
  }

  // --- faults ---------------------------------------------------------------------------------

  void faults() {
    const Nanos now = cluster_.now();
    for (auto it = undo_.begin(); it != undo_.end();) {
      if (it->first > now) {
        ++it;
        continue;
      }
      it->second();
      it = undo_.erase(it);
    }
    if (options_.placement) placement_faults();
    if (now < next_fault_) return;
    auto& r = cluster_.random();
    next_fault_ = now + std::chrono::milliseconds(50 + r.below(250));
    const auto lasting = [&] { return now + std::chrono::milliseconds(100 + r.below(500)); };
    // One of the enabled kinds, drawn uniformly.
    std::vector<unsigned> kinds;
    for (unsigned kind = kIsolateNode; kind <= kLossyLinks; kind <<= 1U) {
      if ((options_.fault_kinds & kind) != 0) kinds.push_back(kind);
    }
    if (kinds.empty()) return;
    const unsigned kind = kinds[r.below(kinds.size())];
    switch (kind) {
      case kIsolateNode:
      case kIsolateLeader: {
        if (network_fault_) return;
        std::uint16_t node = pick_node();
        if (kind == kIsolateLeader) {
          if (const std::uint16_t leader = leader_of(r.below(kPartitions)); leader != 0) node = leader;
        }
        network_fault_ = true;
        ++result_.stats.isolations;
        cluster_.network().isolate(node);
        cluster_.note(fmt::format("isolate node {}", node));
        undo_.emplace_back(lasting(), [this] {
          cluster_.network().heal_all();
          network_fault_ = false;
        });
        return;
      }
      case kCrash:
      case kCrashLeader: {
        if (down_ != 0) return;
        std::uint16_t node = pick_node();
        if (kind == kCrashLeader) {
          if (const std::uint16_t leader = leader_of(r.below(kPartitions)); leader != 0) node = leader;
        }
        const std::uint64_t torn = r.below(2) == 0 ? 0 : r.below(64);
        ++result_.stats.crashes;
        cluster_.crash(node, torn);
        down_ = node;
        undo_.emplace_back(lasting(), [this] {
          cluster_.restart(down_);
          // The restarted pod registers and gets the assignment, when there is a manager.
          if (options_.placement && !manager_down_) publish_to(down_);
          down_ = 0;
        });
        return;
      }
      default: {
        if (lossy_) return;
        lossy_ = true;
        ++result_.stats.lossy_links;
        cluster_.network().set_faults(elfin::testing::LinkFaults{1ms, 12ms, 0.05, 0.05, true});
        undo_.emplace_back(lasting(), [this] {
          cluster_.network().clear_faults();
          lossy_ = false;
        });
        return;
      }
    }
  }

  /// Placement runs: the manager's own faults, on a schedule of their own (every 100 to 400 ms
  /// a replica moves; the manager goes down once a run, for 200 to 700 ms, and then now and then).
  void placement_faults() {
    const Nanos now = cluster_.now();
    auto& r = cluster_.random();
    if ((options_.fault_kinds & kMoveReplica) != 0 && now >= next_move_) {
      next_move_ = now + std::chrono::milliseconds(100 + r.below(300));
      move_replica();
    }
    if ((options_.fault_kinds & kManagerDown) != 0 && now >= next_manager_down_ && !manager_down_) {
      next_manager_down_ = now + std::chrono::milliseconds(600 + r.below(1000));
      manager_down_ = true;
      ++result_.stats.manager_downs;
      cluster_.note("manager down");
      undo_.emplace_back(now + std::chrono::milliseconds(200 + r.below(500)), [this] {
        manager_down_ = false;
        cluster_.note("manager back");
        publish();  // it resyncs every pod with the assignment it stored
      });
    }
  }

  /// A replica of a partition moves to the node without one, as the manager moves it: the new
  /// one takes the old one's place in the list (the owner's too). Not while the manager is down.
  void move_replica() {
    if (manager_down_) return;
    auto& r = cluster_.random();
    const std::uint64_t partition = r.below(kPartitions);
    std::vector<pr::NodeId>& replicas = table_[partition];
    pr::NodeId spare = 0;
    for (pr::NodeId n = 1; n <= nodes_ && spare == 0; ++n) {
      if (std::find(replicas.begin(), replicas.end(), n) == replicas.end()) spare = n;
    }
    // As the manager moves a replica: the new one takes the old one's place (the owner's too).
    const std::size_t at = r.below(replicas.size());
    cluster_.note(fmt::format("move partition {}'s replica from node {} to node {}", partition, replicas[at], spare));
    replicas[at] = spare;
    ++result_.stats.moves;
    publish();
  }

  /// The leader of `partition`: as last seen by a client of the partitions; through the front
  /// (whose clients do not see it), as the replicas that are up say (0: none leads now).
  std::uint16_t leader_of(std::uint64_t partition) {
    if (!options_.front) return last_leader_[partition];
    for (std::uint16_t n = 1; n <= nodes_; ++n) {
      if (!cluster_.is_up(n)) continue;
      auto status = cluster_.request(n, "partitions", pr::GetPartitionStatus{partition});
      cluster_.run_until([&] { return status.done(); }, 10ms);
      if (!status.done()) continue;
      auto answer = status.result();
      if (answer && answer->role == pr::Role::Leader) return n;
    }
    return 0;
  }

  void heal() {
    for (auto& [at, undo] : undo_) undo();
    undo_.clear();
    cluster_.network().heal_all();
    cluster_.network().clear_faults();
    for (std::uint16_t n = 1; n <= nodes_; ++n) {
      if (!cluster_.is_up(n)) cluster_.restart(n);
    }
    if (options_.placement) publish();
    cluster_.note("healed");
    healed_ = true;
  }

  // --- the end --------------------------------------------------------------------------------

  /// One final read through the front: the answer, or nothing (then it is tried again).
  std::optional<lin::KvOutput> final_read_at_front(Client& reader, InFlight& op) {
    auto& request = std::get<2>(op.request);
    ++result_.stats.reads;
    if (request.done()) {
      auto answer = request.result();
      if (answer && *answer) {
        const pk::Found& found = **answer;
        lin::KvOutput out = found.found ? lin::KvOutput::found(found.value, found.version) : lin::KvOutput::not_found();
        reader.record->ok(op.ticket, out);
        return out;
      }
    }
    reader.record->failed(op.ticket);
    reader.front = pick_up_node();
    cluster_.advance(50ms);
    return std::nullopt;
  }

  void final_reads() {
    Client& reader = clients_.front();
    for (std::uint64_t p = 0; p < kPartitions; ++p) {
      for (std::uint64_t k = 0; k < kKeysPerPartition; ++k) {
        const std::string& key = keys_[p][k];
        std::optional<lin::KvOutput> got;
        for (int attempt = 0; attempt < 50 && !got; ++attempt) {
          send(reader, p, lin::KvInput::get(key));
          if (!reader.op) break;
          InFlight& op = *reader.op;
          cluster_.run_until([&] { return done(op); }, kClientTimeout + 1s);
          if (options_.front) {
            got = final_read_at_front(reader, op);
            reader.op.reset();
            continue;
          }
          auto& request = std::get<1>(op.request);
          if (request.done()) {
            auto answer = request.result();
            ++result_.stats.reads;
            if (answer && *answer) {
              const lin::KvOutput out = decode_output((*answer)->response);
              reader.record->ok(op.ticket, out);
              got = out;
            } else {
              reader.record->failed(op.ticket);
              retarget(reader, p, answer ? answer->error().leader_hint : 0);
              cluster_.advance(50ms);
            }
          } else {
            reader.record->failed(op.ticket);
            retarget(reader, p, 0);
          }
          reader.op.reset();
        }
        if (!got) {
          result_.problems.push_back(fmt::format("key {} could not be read after the cluster healed", key));
          continue;
        }
        // Versions are log indexes: an acknowledged write's version is at most the final one,
        // unless a delete removed the key since (then the checker judges the order).
        auto acked = acknowledged_.find(key);
        if (acked != acknowledged_.end() && got->status == lin::KvStatus::Ok && got->version < acked->second) {
          result_.problems.push_back(
              fmt::format("key {}: a write acknowledged with version {} is lost; the final read "
                          "shows version {}",
                          key, acked->second, got->version));
        }
      }
    }
  }

  // --- the manager (placement runs) ----------------------------------------------------------

  /// The table to every node that is up, as each pod's KV front passes the assignment on.
  void publish() {
    ++epoch_;
    for (std::uint16_t n = 1; n <= nodes_; ++n) publish_to(n);
  }
  void publish_to(std::uint16_t node) {
    if (!cluster_.is_up(node)) return;
    pr::Placement table{epoch_, 0, {}, {}};
    for (const auto& replicas : table_) table.replicas.push_back(replicas);
    for (pr::NodeId n = 1; n <= nodes_; ++n) table.nodes.push_back(n);  // every pod is in the map
    cluster_.send(node, "partitions", std::move(table));
  }

  /// A partition's replica on `node` as it reports itself (nullopt: no answer).
  std::optional<pr::PartitionStatus> status_of(std::uint16_t node, std::uint64_t partition) {
    auto status = cluster_.request(node, "partitions", pr::GetPartitionStatus{partition});
    cluster_.run_until([&] { return status.done(); }, 50ms);
    if (!status.done()) return std::nullopt;
    auto answer = status.result();
    if (!answer) return std::nullopt;
    return *answer;
  }

  /// Every partition's leader has the table's replicas as its voters, and no learner.
  void check_memberships() {
    for (std::uint64_t p = 0; p < kPartitions; ++p) {
      std::vector<pr::NodeId> wanted = table_[p];
      std::sort(wanted.begin(), wanted.end());
      std::vector<pr::NodeId> last;
      bool reached = false;
      for (int attempt = 0; attempt < 100 && !reached; ++attempt) {
        for (std::uint16_t n = 1; n <= nodes_ && !reached; ++n) {
          auto status = status_of(n, p);
          if (!status || status->role != pr::Role::Leader) continue;
          last = status->conf.voters;
          std::sort(last.begin(), last.end());
          reached = last == wanted && status->conf.learners.empty();
        }
        if (!reached) cluster_.advance(100ms);
      }
      if (!reached) {
        result_.problems.push_back(fmt::format("partition {}: the membership did not reach the table's [{}]: [{}]", p,
                                               fmt::join(wanted, ","), fmt::join(last, ",")));
      }
    }
  }

 public:
  [[nodiscard]] lin::History<lin::KvInput, lin::KvOutput> history() const { return recorder_.history(); }

 private:
  const RunOptions& options_;
  SimCluster& cluster_;
  RunResult& result_;
  lin::Time clock_ = 0;  // an event counter: one thread plays every client, so it orders events exactly
  KvRecorder recorder_;
  std::vector<Client> clients_;
  std::size_t started_ = 0;
  Nanos next_fault_{0};
  std::vector<std::pair<Nanos, std::function<void()>>> undo_;
  bool network_fault_ = false;
  bool lossy_ = false;
  bool healed_ = false;
  std::uint16_t down_ = 0;
  std::uint16_t last_leader_[kPartitions] = {};
  std::map<std::string, std::uint64_t> acknowledged_;  // the highest acknowledged write version per key
  std::vector<std::vector<std::string>> keys_;         // per partition
  std::uint16_t nodes_ = kNodes;
  // The manager (placement runs): the table it publishes and whether it is down.
  std::vector<pr::NodeId> table_[kPartitions];
  std::uint64_t epoch_ = 0;
  bool manager_down_ = false;
  Nanos next_move_{100ms};
  Nanos next_manager_down_{200ms};
};

}  // namespace

RunResult run(const RunOptions& options) {
  RunResult result;
  const elfin::test::TempDir root("elfin-partition-sim", elfin::test::TempDir::Base::memory);
  auto applied = std::make_shared<AppliedLog>();
  const std::uint16_t nodes = options.placement ? kPlacementNodes : kNodes;
  SimCluster cluster(
      cluster_options(options.seed, root, options.front, options.placement),
      [applied, front = options.front, nodes](SimNode& node) { return node_topology(node, applied, front, nodes); });
  result.describe = cluster.describe();
  Driver driver(options, cluster, result);
  driver.run();
  result.stats.virtual_time = cluster.now();
  result.stats.restores = applied->restores();
  result.history = driver.history();
  result.trace = cluster.trace();
  for (auto& d : applied->divergences()) result.problems.push_back(std::move(d));
  result.check = lin::check(lin::KvModel{}, result.history, {.timeout = std::chrono::seconds(30)});
  return result;
}

std::string first_difference(const RunResult& a, const RunResult& b) {
  const auto& x = a.history.operations;
  const auto& y = b.history.operations;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    const bool same = x[i].client == y[i].client && x[i].invoke == y[i].invoke && x[i].complete == y[i].complete &&
                      x[i].input == y[i].input && x[i].output == y[i].output;
    if (!same) {
      return fmt::format("operation {}: {} vs {}", i, lin::KvModel{}.describe(x[i].input, x[i].output),
                         lin::KvModel{}.describe(y[i].input, y[i].output));
    }
  }
  if (x.size() != y.size()) return fmt::format("{} vs {} operations", x.size(), y.size());
  if (a.trace != b.trace) return "the traces differ";
  return {};
}

DeadlineProbe probe_front_deadline(std::uint64_t seed) {
  const elfin::test::TempDir root("elfin-partition-sim", elfin::test::TempDir::Base::memory);
  auto applied = std::make_shared<AppliedLog>();
  SimCluster cluster(cluster_options(seed, root, true),
                     [applied](SimNode& node) { return node_topology(node, applied, true); });
  // The shard exists and has a leader before the nodes are cut off.
  auto first = cluster.request(1, "kv", pk::Put{"k0", "before"});
  cluster.run_until([&] { return first.done(); }, 10s);
  for (std::uint16_t n = 1; n <= kNodes; ++n) cluster.network().isolate(n);
  const Nanos sent = cluster.now();
  auto put = cluster.request(1, "kv", pk::Put{"k0", "cut off"});
  DeadlineProbe probe;
  probe.answered = cluster.run_until([&] { return put.done(); }, 10s);
  probe.after = cluster.now() - sent;
  if (probe.answered) {
    auto answer = put.result();
    if (!answer) {
      probe.error = elfin::to_string(answer.error());
    } else if (!*answer) {
      probe.error = pk::to_string(answer->error());
    }
  }
  return probe;
}

namespace {

/// A placement cluster (four nodes) for the probes: the table, and calls on partition 0 that
/// follow NotLeader hints.
class PlacementCluster {
 public:
  explicit PlacementCluster(std::uint64_t seed)
      : root_("elfin-partition-sim", elfin::test::TempDir::Base::memory),
        applied_(std::make_shared<AppliedLog>()),
        cluster_(cluster_options(seed, root_, false, true),
                 [applied = applied_](SimNode& node) { return node_topology(node, applied, false, kPlacementNodes); }) {
  }

  SimCluster& cluster() { return cluster_; }

  void publish(std::vector<std::vector<pr::NodeId>> table) {
    table_ = std::move(table);
    ++epoch_;
    for (std::uint16_t n = 1; n <= kPlacementNodes; ++n) publish_to(n);
  }
  void publish_to(std::uint16_t node) {
    if (cluster_.is_up(node)) cluster_.send(node, "partitions", pr::Placement{epoch_, 0, table_, {1, 2, 3, 4}});
  }

  /// `input` on partition 0, first at `node`, then where NotLeader hints point (another node
  /// after a pause without one); nullopt when nothing answered within `within`. `answered_at`:
  /// the node that answered.
  std::optional<lin::KvOutput> call(std::uint16_t node, const lin::KvInput& input, Nanos within,
                                    std::uint16_t* answered_at = nullptr, bool follow = true) {
    const Nanos until = cluster_.now() + within;
    while (cluster_.now() < until) {
      std::optional<lin::KvOutput> out;
      std::uint64_t hint = 0;
      const auto take = [&](auto& r) {
        cluster_.run_until([&] { return r.done(); }, 1500ms);
        if (!r.done()) return;
        auto answer = r.result();  // once: it hands the answer over
        if (!answer) return;
        if (*answer) {
          out = decode_output((*answer)->response);
        } else {
          hint = answer->error().leader_hint;
        }
      };
      if (input.call == lin::KvCall::Get) {
        auto r = cluster_.request(node, "partitions", pr::Read{0, encode(input), false});
        take(r);
      } else {
        auto r = cluster_.request(node, "partitions", pr::Propose{0, encode(input)});
        take(r);
      }
      if (out) {
        if (answered_at != nullptr) *answered_at = node;
        return out;
      }
      if (!follow) return std::nullopt;
      if (hint >= 1 && hint <= kPlacementNodes && hint != node) {
        node = static_cast<std::uint16_t>(hint);
      } else {
        node = static_cast<std::uint16_t>(1 + node % kPlacementNodes);
        cluster_.advance(50ms);
      }
    }
    return std::nullopt;
  }

  std::optional<pr::PartitionStatus> status(std::uint16_t node) {
    if (!cluster_.is_up(node)) return std::nullopt;
    auto r = cluster_.request(node, "partitions", pr::GetPartitionStatus{0});
    cluster_.run_until([&] { return r.done(); }, 100ms);
    if (!r.done()) return std::nullopt;
    auto answer = r.result();
    if (!answer) return std::nullopt;
    return std::move(*answer);
  }

  /// A leader among the nodes that are up has exactly `voters` (sorted) and no learner.
  bool leader_has(const std::vector<pr::NodeId>& voters) {
    for (std::uint16_t n = 1; n <= kPlacementNodes; ++n) {
      auto st = status(n);
      if (!st || st->role != pr::Role::Leader) continue;
      auto got = st->conf.voters;
      std::sort(got.begin(), got.end());
      if (got == voters && st->conf.learners.empty()) return true;
    }
    return false;
  }

  [[nodiscard]] std::filesystem::path snapshots(std::uint16_t node) {
    return std::filesystem::path(cluster_.disk(node).dir() + "-snapshots");
  }

 private:
  elfin::test::TempDir root_;
  std::shared_ptr<AppliedLog> applied_;
  SimCluster cluster_;
  std::vector<std::vector<pr::NodeId>> table_;
  std::uint64_t epoch_ = 0;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string describe_output(const std::optional<lin::KvOutput>& out) {
  if (!out) return {};
  return lin::KvModel{}.describe(lin::KvInput::get("k"), out);
}

}  // namespace

StrayReplicaProbe probe_stray_replica(std::uint64_t seed) {
  StrayReplicaProbe probe;
  PlacementCluster c(seed);
  SimCluster& cluster = c.cluster();
  c.publish({{1, 2, 3}});
  std::uint64_t version = 0;
  for (int i = 0; i < 5; ++i) {
    auto out = c.call(1, lin::KvInput::put("k", fmt::format("v{}", i)), 10s);
    if (!out) return probe;
    version = out->version;
  }
  // Node 3 holds the writes, then goes down.
  cluster.run_until(
      [&] {
        auto st = c.status(3);
        return st && st->applied >= version;
      },
      5s);
  cluster.crash(3);
  c.publish({{1, 2, 4}});
  probe.moved = cluster.run_until([&] { return c.leader_has({1, 2, 4}); }, 10s);
  // More writes after the removal: the members' logs move past anything node 3 holds.
  for (int i = 0; i < 3; ++i) std::ignore = c.call(1, lin::KvInput::put("k", fmt::format("w{}", i)), 5s);
  const std::filesystem::path dir = c.snapshots(3) / "0";
  const std::filesystem::path marker = c.snapshots(3) / "0.released";
  probe.held = std::filesystem::exists(dir);
  cluster.restart(3);
  const Nanos restarted = cluster.now();
  c.publish_to(3);  // as the pod's front passes the assignment on once registered
  probe.released =
      cluster.run_until([&] { return !std::filesystem::exists(dir) && std::filesystem::exists(marker); }, 10s);
  probe.after = cluster.now() - restarted;
  probe.marker = read_text(marker);
  auto read = c.call(1, lin::KvInput::get("k"), 5s);
  probe.readable = read && read->status == lin::KvStatus::Ok && read->value == "w2";
  return probe;
}

InterruptedReleaseProbe probe_interrupted_release(std::uint64_t seed, bool directory_deleted) {
  namespace pw = elfin::protocols::wal;
  InterruptedReleaseProbe probe;
  PlacementCluster c(seed);
  SimCluster& cluster = c.cluster();
  c.publish({{1, 2, 3}});
  std::uint64_t version = 0;
  for (int i = 0; i < 50; ++i) {  // past snapshot_every (40): a snapshot, and log entries after it
    auto out = c.call(1, lin::KvInput::put("k", fmt::format("v{}", i)), 10s);
    if (!out) return probe;
    version = out->version;
  }
  std::optional<pr::PartitionStatus> held;
  cluster.run_until(
      [&] {
        held = c.status(3);
        return held && held->applied >= version;
      },
      5s);
  if (!held) return probe;
  probe.held = held->snapshot_index != 0 && held->last_index > held->snapshot_index;
  cluster.crash(3);
  probe.released = held->last_index;
  const std::filesystem::path dir = c.snapshots(3) / "0";
  {
    std::FILE* marker = std::fopen((c.snapshots(3) / "0.released").c_str(), "wb");
    if (marker == nullptr) return probe;
    std::fputs(fmt::format("{}\n", probe.released).c_str(), marker);
    std::fclose(marker);
  }
  if (directory_deleted) std::filesystem::remove_all(dir);
  c.publish({{1, 2, 4}});
  cluster.run_until([&] { return c.leader_has({1, 2, 4}); }, 10s);
  cluster.restart(3);
  c.publish_to(3);
  cluster.advance(100ms);
  std::optional<pr::PartitionStatus> after;
  cluster.run_until([&] { return (after = c.status(3)).has_value(); }, 2s);
  if (after) {
    probe.replica_last = after->last_index;
    probe.replica_snapshot = after->snapshot_index;
  }
  auto range = cluster.request(3, "wal", pw::ReadRange{0, 1, UINT64_MAX, 0});
  cluster.run_until([&] { return range.done(); }, 1s);
  if (range.done()) {
    if (auto answer = range.result(); answer && *answer) {
      probe.wal_last = (*answer)->last_index;
      probe.wal_entries = (*answer)->entries.size();
    }
  }
  probe.directory = std::filesystem::exists(dir);
  auto read = c.call(1, lin::KvInput::get("k"), 5s);
  probe.readable = read && read->status == lin::KvStatus::Ok && read->value == "v49";
  return probe;
}

MovedOwnerProbe probe_moved_owner(std::uint64_t seed) {
  MovedOwnerProbe probe;
  PlacementCluster c(seed);
  SimCluster& cluster = c.cluster();
  c.publish({{1}});
  auto written = c.call(1, lin::KvInput::put("k", "before the move"), 10s);
  probe.written = written && written->status == lin::KvStatus::Ok;
  // Node 1 cut off; the lone replica's place goes to node 4, which restarts right after.
  cluster.network().isolate(1);
  c.publish({{4}});
  cluster.crash(4);
  cluster.restart(4);
  c.publish_to(4);
  // Reads at node 4 (which creates its replica) for a while, well past any deferral: with node 1
  // cut off, whatever answers there is a second group; and a snapshot on node 4's disk can only
  // be its own bootstrap (the leader that could send one is cut off).
  std::optional<lin::KvOutput> cut;
  const Nanos until = cluster.now() + 3s;
  while (!cut && cluster.now() < until) {
    cut = c.call(4, lin::KvInput::get("k"), 200ms, nullptr, false);
    if (!cut) cluster.advance(100ms);
  }
  probe.bootstrapped_elsewhere = cut.has_value() || std::filesystem::exists(c.snapshots(4) / "0");
  probe.read_while_cut = describe_output(cut);
  cluster.network().heal_all();
  auto after = c.call(4, lin::KvInput::get("k"), 20s);
  probe.read_after = describe_output(after);
  probe.read_back = after && after->status == lin::KvStatus::Ok && after->value == "before the move";
  return probe;
}

FirstLeaderProbe probe_first_leader(std::uint64_t seed, const std::vector<std::uint64_t>& replicas) {
  FirstLeaderProbe probe;
  PlacementCluster c(seed);
  SimCluster& cluster = c.cluster();
  const Nanos start = cluster.now();
  c.publish({replicas});
  const auto owner = static_cast<std::uint16_t>(replicas.front());
  while (cluster.now() < start + 2s) {
    if (auto st = c.status(owner); st && st->role == pr::Role::Leader) {
      probe.led = true;
      probe.after = cluster.now() - start;
      probe.term = st->term;
      break;
    }
    cluster.advance(1ms);
  }
  return probe;
}

StaticLeaderProbe probe_static_first_leader(std::uint64_t seed, std::uint64_t partition) {
  StaticLeaderProbe probe;
  const elfin::test::TempDir root("elfin-partition-sim", elfin::test::TempDir::Base::memory);
  const auto applied = std::make_shared<AppliedLog>();
  SimCluster cluster(cluster_options(seed, root, false),
                     [&applied](SimNode& node) { return node_topology(node, applied, false); });
  const Nanos start = cluster.now();
  auto put = cluster.request(1, "partitions", pr::Propose{partition, encode(lin::KvInput::put("k", "v"))});
  cluster.run_until([&] { return put.done(); }, 10ms);
  if (put.done()) {
    if (auto answer = put.result(); answer && !*answer) probe.hint = answer->error().leader_hint;
  }
  // Partition actors start with the first message for them: a status request at every node.
  while (cluster.now() < start + 2s && probe.leader == 0) {
    for (std::uint16_t n = 1; n <= kNodes && probe.leader == 0; ++n) {
      auto status = cluster.request(n, "partitions", pr::GetPartitionStatus{partition});
      cluster.run_until([&] { return status.done(); }, 10ms);
      if (!status.done()) continue;
      auto answer = status.result();
      if (answer && answer->role == pr::Role::Leader) {
        probe.leader = n;
        probe.after = cluster.now() - start;
      }
    }
    cluster.advance(1ms);
  }
  return probe;
}

}  // namespace psim
