// The simulated network's state, shared by the cluster (which delivers), the sim remote groups'
// forwarders (which send) and the answer callbacks of requests delivered through it. One lock;
// the cluster lets only one node run at a time, so the lock is never contended, but it gives the
// threads of the nodes and the test their happens-before.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <elfin/addr.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/detail/request_ops.hpp>
#include <elfin/envelope.hpp>
#include <elfin/testing/sim_network.hpp>
#include <elfin/testing/sim_random.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::testing {

struct SimNetwork::State : std::enable_shared_from_this<SimNetwork::State> {
  using Nanos = std::chrono::nanoseconds;

  struct Event {
    enum class Kind : std::uint8_t { Message, Response };
    Kind kind = Kind::Message;
    Nanos at{0};
    std::uint64_t seq = 0;
    std::uint16_t from = 0;
    std::uint16_t to = 0;
    std::uint32_t to_incarnation = 0;  ///< delivered only to this life of the node
    std::optional<std::string> lost;   ///< why it will not arrive
    bool duplicate = false;            ///< a copy: losing it fails no request
    std::string what;                  ///< protocol.name, for the trace
    // A message:
    std::string protocol;
    std::string name;
    std::string payload;
    Addr sender;
    TraceId trace;
    std::string remote_name;  ///< the target group; empty: `recipient`, an address on the target node
    Addr recipient;
    bool request = false;
    bool request_all = false;
    std::uint64_t request_id = 0;
    // A response (request_id says to what):
    std::vector<detail::EncodedAnswer> answers;
  };

  /// A request sent over the network whose answer has not come back.
  struct Pending {
    std::shared_ptr<detail::RequestStateBase> state;
    const detail::RequestOps* ops = nullptr;
    std::uint16_t from = 0;  ///< the requester's node
    std::uint16_t to = 0;
  };

  struct Failure {
    std::uint16_t node = 0;  ///< whose actor waits for it
    std::shared_ptr<detail::RequestStateBase> state;
    std::string reason;
  };

  State(std::uint64_t seed, std::uint16_t nodes, LinkFaults faults);

  // --- from the nodes (forwarders and answer callbacks, on a node's worker) ---------------------
  [[nodiscard]] std::vector<std::uint16_t> connected(std::uint16_t self, const std::vector<std::uint16_t>& nodes) const;
  /// Encodes `envelope` and puts it on the link, for the group `remote_name` on node `to` (empty:
  /// for the envelope's recipient address there); a request's answer obligation moves here.
  void send(std::uint16_t from, std::uint16_t to, const std::string& remote_name, Envelope& envelope);
  /// The answers of request `request_id`, from node `from` back to the requester's node `to`.
  void respond(std::uint16_t from, std::uint16_t to, std::uint64_t request_id,
               std::vector<detail::EncodedAnswer> answers);

  // --- from the cluster's thread ---------------------------------------------------------------
  [[nodiscard]] std::optional<Nanos> next_time() const;
  /// The events due at `t` or before, in delivery order.
  [[nodiscard]] std::vector<Event> take_due(Nanos t);
  [[nodiscard]] std::optional<Pending> take_pending(std::uint64_t request_id);
  void set_now(Nanos t);
  /// The node comes up (again); returns its new incarnation.
  std::uint32_t node_up(std::uint16_t node);
  /// The node goes down: returns the requests waiting for it, which must fail; requests it was
  /// waiting for are forgotten.
  [[nodiscard]] std::vector<Failure> node_down(std::uint16_t node, const std::string& why);
  [[nodiscard]] bool is_up(std::uint16_t node) const;
  [[nodiscard]] std::uint32_t incarnation(std::uint16_t node) const;
  void log(std::string_view text);
  [[nodiscard]] std::vector<std::string> trace() const;

  // --- the knobs (SimNetwork) ------------------------------------------------------------------
  mutable std::mutex mu;
  LinkFaults default_faults;                                                  // guarded by mu
  std::map<std::pair<std::uint16_t, std::uint16_t>, LinkFaults> link_faults;  // guarded by mu
  std::set<std::pair<std::uint16_t, std::uint16_t>> cuts;                     // guarded by mu
  SimNetworkStats stats;                                                      // guarded by mu
  std::uint16_t nodes;

 private:
  struct NodeState {
    bool up = false;
    std::uint32_t incarnation = 0;
  };
  [[nodiscard]] const LinkFaults& faults_locked(std::uint16_t from, std::uint16_t to) const;
  [[nodiscard]] bool up_locked(std::uint16_t node) const;
  /// Draws the event's fate and delivery time and queues it (a duplicate too, maybe).
  void route_locked(Event event);
  void log_locked(std::string_view text);

  SimRandom random_;                                               // guarded by mu
  Nanos now_{0};                                                   // guarded by mu
  std::vector<NodeState> node_states_;                             // guarded by mu; index = node
  std::map<std::pair<std::uint16_t, std::uint16_t>, Nanos> tail_;  // guarded by mu; FIFO links' last delivery
  std::map<std::pair<Nanos, std::uint64_t>, Event> queue_;         // guarded by mu
  std::map<std::uint64_t, Pending> pending_;                       // guarded by mu
  std::vector<std::string> trace_;                                 // guarded by mu
  std::uint64_t next_seq_ = 1;                                     // guarded by mu
  std::uint64_t next_request_ = 1;                                 // guarded by mu
};

/// "   12.345678 ms": virtual time in the trace.
[[nodiscard]] std::string format_sim_time(std::chrono::nanoseconds t);

/// What a sim remote group binds to: the network and the node whose system is being started.
struct SimLink {
  std::shared_ptr<SimNetwork::State> net;
  std::uint16_t node_no = 0;
};

/// The group of direct forwarders the cluster mounts on every node: sends to actor addresses on
/// other nodes (a reply to a remote sender, say) go through it, as through the network battery's
/// `system.network`. See sim_direct_sends.cpp.
inline constexpr const char* kSimDirectGroup = "system.sim_network";
[[nodiscard]] Blueprint sim_direct_forwarders();

/// The node the calling thread is starting (SimCluster), or null.
[[nodiscard]] const SimLink* starting_sim_node();

/// While alive, `starting_sim_node()` on this thread is `link`.
class [[nodiscard]] StartingSimNode {
 public:
  explicit StartingSimNode(const SimLink& link);
  StartingSimNode(const StartingSimNode&) = delete;
  StartingSimNode& operator=(const StartingSimNode&) = delete;
  ~StartingSimNode();

 private:
  const SimLink* previous_;
};

}  // namespace elfin::testing
