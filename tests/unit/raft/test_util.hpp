// Helpers shared by the raft tests: a cluster driven by hand (no automatic ticks, one-step
// links, instant disks) and a lone Node whose readies the test inspects.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <elfin/raft/node.hpp>

#include "sim_cluster.hpp"

namespace elfin::raft::test {

inline sim::Options manual(std::size_t nodes, bool pre_vote = true) {
  sim::Options options;
  options.nodes = nodes;
  options.seed = 7;
  options.auto_tick = false;
  options.faults = sim::Faults{1, 1, 0, 0, 0};
  options.config.election_tick = 10;
  options.config.heartbeat_tick = 1;
  options.config.pre_vote = pre_vote;
  options.config.check_quorum = true;
  return options;
}

inline Recovered bootstrap(std::vector<NodeId> voters) {
  Recovered recovered;
  recovered.conf.voters = std::move(voters);
  return recovered;
}

inline Config config(NodeId id) {
  Config c;
  c.id = id;
  c.seed = 1;
  return c;
}

/// Ticks every node until one leads (bounded); returns it.
inline NodeId elect_by_ticks(sim::Cluster& cluster, int max_ticks = 200) {
  for (int k = 0; k < max_ticks; ++k) {
    cluster.tick_all();
    cluster.settle();
    if (NodeId leader = cluster.leader(); leader != 0) {
      return leader;
    }
  }
  return 0;
}

inline std::vector<Message> all_messages(const Ready& ready) {
  std::vector<Message> out = ready.messages;
  out.insert(out.end(), ready.messages_after_persist.begin(), ready.messages_after_persist.end());
  return out;
}

}  // namespace elfin::raft::test

namespace elfin::raft::test {

/// Makes `target` leader: the other `voters` first let their leader stickiness expire (their own
/// campaigns are dropped meanwhile), then `target` campaigns. `keep` is a filter to keep applying.
inline bool take_over(sim::Cluster& cluster, NodeId target, std::vector<NodeId> voters,
                      std::function<bool(const Message&)> keep = nullptr) {
  for (int attempt = 0; attempt < 5 && cluster.node(target).role() != Role::Leader; ++attempt) {
    cluster.set_filter([&](const Message& m) {
      return (keep && keep(m)) || ((m.type == MessageType::PreVote || m.type == MessageType::Vote) && m.from != target);
    });
    for (int k = 0; k < 10; ++k) {
      for (NodeId id : voters) {
        if (id != target && cluster.alive(id)) {
          cluster.tick(id);
        }
      }
      cluster.settle();
    }
    cluster.set_filter(keep);
    cluster.elect(target);
  }
  return cluster.node(target).role() == Role::Leader;
}

}  // namespace elfin::raft::test
