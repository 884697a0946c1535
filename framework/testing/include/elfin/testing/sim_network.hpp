// SimNetwork: the simulated cluster's network — per directed link (from node, to node) a delay
// range, a drop and a duplicate probability, FIFO or reordering delivery, and whether the link is
// cut (a partition). Messages that remote groups (`sim_remote_group`) send between nodes travel
// here, encoded as on the real network (msgpack, named fields), and are delivered to the group on
// the target node at a virtual time the link's delay decides; responses travel back the same way.
//
//   cluster.network().set_faults({.min_delay = 1ms, .max_delay = 20ms, .drop = 0.05, .reorder = true});
//   cluster.network().partition({1}, {2, 3});   // both ways; cut(1, 2) is one way
//   cluster.network().heal_all();
//
// What is lost: a dropped message, one sent or in flight over a cut link, one to a node that is
// down or that restarted since it was sent. A lost request fails its requester (Failed, with the
// reason) at the moment it would have arrived, and so does a request whose response is lost: a
// requester never waits for ever because of the network, as with the real one, which fails
// requests when a connection is lost. A duplicated request is handled twice; the requester takes
// the first answer. Deliveries do not wait for room: the target mailbox takes them unbounded.
//
// Every draw comes from the cluster's seed, in the order the nodes send, which the cluster keeps
// the same from run to run (see sim_cluster.hpp).
//
// Thread safety: the fault knobs from the test's thread, between the cluster's steps.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace elfin::testing {

struct LinkFaults {
  /// Each message takes a delay drawn uniformly in [min_delay, max_delay].
  std::chrono::nanoseconds min_delay{std::chrono::milliseconds(1)};
  std::chrono::nanoseconds max_delay{std::chrono::milliseconds(1)};
  /// Probability that a message is lost.
  double drop = 0.0;
  /// Probability that a message is delivered twice (the copy with a delay of its own).
  double duplicate = 0.0;
  /// false: a link delivers in the order it was given messages (as a TCP connection does); true:
  /// each message keeps the delay it drew, so later ones may overtake it.
  bool reorder = false;
};

struct SimNetworkStats {
  std::uint64_t sent = 0;
  std::uint64_t delivered = 0;  ///< messages and responses handed to a node
  std::uint64_t lost = 0;       ///< dropped, cut, or for a node that was down
  std::uint64_t duplicated = 0;
};

class SimNetwork {
 public:
  /// Faults of every link that has none of its own.
  void set_faults(LinkFaults faults);
  /// Faults of the link from `from` to `to` (one direction).
  void set_faults(std::uint16_t from, std::uint16_t to, LinkFaults faults);
  /// Every link back to the defaults (1 ms, nothing lost); cuts stay.
  void clear_faults();

  /// Cuts the link from `from` to `to` only: `to` still reaches `from`.
  void cut(std::uint16_t from, std::uint16_t to);
  /// Cuts every link between the two sides, both ways.
  void partition(const std::vector<std::uint16_t>& side_a, const std::vector<std::uint16_t>& side_b);
  /// Cuts `node` off from every other node, both ways.
  void isolate(std::uint16_t node);
  /// Restores the link from `from` to `to`.
  void heal(std::uint16_t from, std::uint16_t to);
  /// Restores every link.
  void heal_all();
  [[nodiscard]] bool is_cut(std::uint16_t from, std::uint16_t to) const;

  [[nodiscard]] SimNetworkStats stats() const;

  struct State;
  explicit SimNetwork(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace elfin::testing
