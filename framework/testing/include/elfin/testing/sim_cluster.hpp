// SimCluster: several nodes of one service in one process, on one virtual clock, over a simulated
// network and simulated disks, driven by one seed — a deterministic simulation in the manner of
// FoundationDB's and TigerBeetle's, for testing replicated groups under faults in milliseconds.
//
//   elfin::testing::SimCluster cluster({.nodes = 3, .seed = 42}, [](elfin::testing::SimNode& node) {
//     elfin::Topology topology;
//     auto replicas = topology.local("replicas");
//     auto peers = topology.local("peers");
//     replicas.route_to(peers, elfin::filters::protocol("replica"));
//     replicas.mount(replica_blueprint());
//     peers.mount(elfin::testing::sim_remote_group({.nodes = {1, 2, 3}, .remote_name = "replicas"}));
//     return topology;
//   });
//   cluster.network().set_faults({.max_delay = 10ms, .drop = 0.1});
//   cluster.advance(500ms);
//   cluster.crash(2);  cluster.network().partition({1}, {3});  cluster.restart(2);
//   CHECK(cluster.run_until([&] { return converged(); }, 10s));
//
// Each node is a full System (node numbers 1..N) built by the topology function, with one worker
// and virtual time starting at the same instant. The cluster alone moves time: it goes from event
// to event (the earliest timer of any node or the earliest delivery in the network), and at each
// instant it hands the due deliveries to each node in turn and fires each node's due timers,
// letting that node settle (no actor queued or running, no WAL I/O in flight) before it turns to
// the next. A crash stops a node's system at once (System::kill: no Terminate, its groups get no
// say) and cuts its disk's power (unsynced data is undone); a restart builds a new system for the
// same node number on the same disk. Between nodes, messages go through sim remote groups
// (sim_remote_group.hpp) or to actor addresses on other nodes, over the simulated network
// (sim_network.hpp); a node's disk is a SimDisk (sim_disk.hpp).
//
// What is deterministic: with one worker, input handed over only while a node is settled, and
// wake-ups of one instant queued together, each node runs its actors in the same order on every
// run; nodes run one at a time in node order; every random draw comes from the seed in that
// order. So the same seed and the same test give the same run: the same messages, delays, drops,
// timer firings and crashes, in the same order (`trace()` records them; a test compares two runs).
// What is not: anything that reads the real clock or real randomness (TraceId::generate, an
// actor's std::random_device or steady_clock), threads of a group's own whose results arrive
// between an actor's messages (the run settles for them, but when their completion lands among
// the messages of the same instant is up to the machine), and unordered containers of pointers.
// Such groups still run correctly under the cluster; only their interleavings within one instant
// may differ between two runs of a seed. Groups that read the system's clock (System::now, as
// the partition and WAL actors do) replay exactly; the WAL actors also do their I/O inline under
// virtual time, for that reason.
//
// A seed: `SimClusterOptions::seed`, else the environment variable ELFIN_SIM_SEED, else a random
// one, printed to stderr. Errors the cluster throws (SimError) name the seed; so does the
// destructor when the test is unwinding. Give the seed back to replay the run.
//
// Thread safety: a SimCluster is driven by one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/message.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/system.hpp>
#include <elfin/testing/sim_disk.hpp>
#include <elfin/testing/sim_network.hpp>
#include <elfin/testing/sim_random.hpp>
#include <elfin/testing/sim_remote_group.hpp>
#include <elfin/topology.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::testing {

/// A broken run: a node that did not settle, a node that could not start, a livelock.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the topology function knows of the node it builds.
class SimNode {
 public:
  SimNode(std::uint16_t node_no, std::uint32_t incarnation, std::uint64_t seed, SimDisk& disk)
      : node_no_(node_no), incarnation_(incarnation), seed_(seed), disk_(&disk) {}
  [[nodiscard]] std::uint16_t node_no() const { return node_no_; }
  /// 1 for the first start, one more for each restart.
  [[nodiscard]] std::uint32_t incarnation() const { return incarnation_; }
  /// A seed for the node's own randomness (e.g. election timeouts), derived from the cluster's
  /// seed, the node and its incarnation.
  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  /// The node's disk, the same across restarts.
  [[nodiscard]] SimDisk& disk() const { return *disk_; }

 private:
  std::uint16_t node_no_;
  std::uint32_t incarnation_;
  std::uint64_t seed_;
  SimDisk* disk_;
};

using SimTopology = std::function<Topology(SimNode&)>;

struct SimClusterOptions {
  /// Nodes 1..nodes.
  std::uint16_t nodes = 3;
  /// Unset: ELFIN_SIM_SEED, else a random seed (printed).
  std::optional<std::uint64_t> seed;
  /// Every link's faults at the start.
  LinkFaults faults{};
  /// Each node's config document (TOML), e.g. the WAL's `dir`; none if unset.
  std::function<std::string(const SimNode&)> config;
  /// Where the nodes' disks go (a directory per node); empty: a temporary directory, removed
  /// with the cluster.
  std::filesystem::path disk_root;
  /// Real time a node may take to settle before the run is declared broken (an actor that never
  /// waits, a deadlock).
  std::chrono::milliseconds settle_timeout{10'000};
  /// Events one instant may hold before the run is declared a livelock (messages bouncing
  /// between nodes with no delay).
  std::uint64_t max_steps_per_instant = 100'000;
};

/// A request made from outside the cluster (`SimCluster::request`): done once answered.
template <class Response>
class SimRequest {
 public:
  explicit SimRequest(std::shared_ptr<detail::RequestState<Response>> state) : state_(std::move(state)) {}
  [[nodiscard]] bool done() const { return state_->done(); }
  /// The answer; call once `done()`.
  [[nodiscard]] Result<Response, RequestError> result() { return state_->take_any(); }

 private:
  std::shared_ptr<detail::RequestState<Response>> state_;
};

class SimCluster {
 public:
  /// Starts every node and lets them settle; throws SimError if one cannot start.
  SimCluster(SimClusterOptions options, SimTopology topology);
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;
  /// Kills every node (no graceful termination) and removes a temporary disk root.
  ~SimCluster();

  [[nodiscard]] std::uint64_t seed() const;
  /// "sim cluster: seed 42 (ELFIN_SIM_SEED=42 replays it), t = 1.5 s" — for Catch2's INFO.
  [[nodiscard]] std::string describe() const;
  /// Virtual time since the cluster started.
  [[nodiscard]] std::chrono::nanoseconds now() const;

  /// Moves time forward by `by`, playing every event due meanwhile in order.
  void advance(std::chrono::nanoseconds by);
  /// Plays events until `done()` holds (checked before each instant) or `within` has passed;
  /// returns `done()`.
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds within);

  /// Stops node `node_no` at once (see System::kill) and loses its disk's power: what was not
  /// synced is undone, except `torn_bytes` of each file's unsynced tail (a torn write). Requests
  /// waiting for the node fail; what was on its way to it is lost.
  void crash(std::uint16_t node_no, std::uint64_t torn_bytes = 0);
  /// Starts node `node_no` again (a new System on the same disk) and lets it settle.
  void restart(std::uint16_t node_no);
  [[nodiscard]] bool is_up(std::uint16_t node_no) const;
  [[nodiscard]] std::uint16_t size() const;

  [[nodiscard]] SimNetwork& network();
  [[nodiscard]] SimDisk& disk(std::uint16_t node_no);
  /// The running system of a node that is up.
  [[nodiscard]] System& system(std::uint16_t node_no);
  /// A random stream of the seed's for the test's own choices (which node to crash, when).
  [[nodiscard]] SimRandom& random();

  /// Sends `message` from outside to the group `group` on node `node_no` (routed by that group's
  /// router), at the current instant, and lets the node settle.
  template <Message M>
  void send(std::uint16_t node_no, std::string_view group, M message) {
    inject(node_no, group, Envelope::make(std::move(message), Addr{}, TraceId::generate()));
  }
  /// Requests from outside; the answer arrives as the cluster runs (`run_until(r.done())`).
  template <Request R>
  [[nodiscard]] SimRequest<typename R::Response> request(std::uint16_t node_no, std::string_view group, R request) {
    auto state = std::make_shared<detail::RequestState<typename R::Response>>(false, detail::Waker{});
    Envelope envelope = Envelope::make(std::move(request), Addr{}, TraceId::generate(), MessageKind::Request);
    detail::EnvelopeAccess::block(envelope)->request = state;
    inject(node_no, group, std::move(envelope), state.get());
    return SimRequest<typename R::Response>{std::move(state)};
  }

  /// Adds a line to the trace (at the current instant), e.g. what the test observed.
  void note(std::string_view text);
  /// Every event so far, one line each: sends (with delay, payload hash, drop, duplicate),
  /// deliveries, losses, crashes, restarts, notes. Two runs of one seed give the same lines.
  [[nodiscard]] std::vector<std::string> trace() const;

  struct Impl;

 private:
  void inject(std::uint16_t node_no, std::string_view group, Envelope envelope,
              detail::RequestStateBase* request = nullptr);
  std::unique_ptr<Impl> impl_;
};

}  // namespace elfin::testing
