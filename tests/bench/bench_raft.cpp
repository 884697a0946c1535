// bench_raft: what the Raft state machine (libs/raft) costs on one thread, without I/O: a whole
// group lives in one process, messages go through a FIFO, and every ready is acknowledged durable
// at once (no disk), so the figures are the library's own CPU cost per entry and per heartbeat.
//
//   replicate_3_nodes_128   the leader of a 3-node group takes 128-byte proposals in batches of
//                           64, then the group runs until the batch is applied on every node;
//                           ops = entries applied (counted on the leader)
//   replicate_5_nodes_128   the same with 5 nodes
//   idle_heartbeat_3_nodes  an idle 3-node group ticks; every tick is a heartbeat round (leader
//                           to both followers and back); ops = ticks
//
// There is no peer: the lines say caf_ops_per_s=n/a. Each run verifies that every node applied
// every entry (or that the leader kept its term), so a broken build cannot report a figure.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/raft/node.hpp>

#include "bench_common.hpp"

namespace {

using elfin_bench::Figure;
using elfin_bench::Options;
using Clock = std::chrono::steady_clock;
namespace raft = elfin::raft;

constexpr std::string_view kBench = "raft";

struct Group {
  explicit Group(std::size_t n) {
    raft::Recovered recovered;
    for (raft::NodeId id = 1; id <= n; ++id) {
      recovered.conf.voters.push_back(id);
    }
    for (raft::NodeId id = 1; id <= n; ++id) {
      raft::Config config;
      config.id = id;
      config.seed = 1;
      nodes.push_back(std::make_unique<raft::Node>(config, recovered, nullptr));
      applied.push_back(0);
    }
  }

  raft::Node& node(raft::NodeId id) { return *nodes[id - 1]; }

  // Drains every node's readies and delivers every message until the group is quiet.
  void run() {
    bool busy = true;
    while (busy) {
      busy = false;
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        raft::Node& n = *nodes[k];
        while (n.has_ready()) {
          busy = true;
          raft::Ready ready = n.ready();
          for (raft::Message& m : ready.messages) {
            network.push_back(std::move(m));
          }
          n.advance(ready.id);  // "durable" at once
          for (raft::Message& m : ready.messages_after_persist) {
            network.push_back(std::move(m));
          }
          if (!ready.committed.empty()) {
            applied[k] = ready.committed.back().index;
          }
        }
      }
      while (!network.empty()) {
        busy = true;
        raft::Message m = std::move(network.front());
        network.pop_front();
        node(m.to).step(std::move(m));
      }
    }
  }

  std::vector<std::unique_ptr<raft::Node>> nodes;
  std::vector<raft::Index> applied;
  std::deque<raft::Message> network;
};

Figure replicate(std::size_t n, std::uint64_t entries) {
  Group group(n);
  group.node(1).campaign();
  group.run();
  if (group.node(1).role() != raft::Role::Leader) throw std::runtime_error("no leader");
  const raft::Index first = group.node(1).last_index();
  const raft::Bytes payload(128, 7);
  const auto start = Clock::now();
  for (std::uint64_t done = 0; done < entries; done += 64) {
    for (int k = 0; k < 64; ++k) {
      if (!group.node(1).propose(payload)) throw std::runtime_error("proposal refused");
    }
    group.run();
  }
  const auto end = Clock::now();
  const raft::Index last = first + ((entries + 63) / 64) * 64;
  for (raft::Index a : group.applied) {
    if (a != last) throw std::runtime_error(fmt::format("applied {} of {}", a, last));
  }
  return {elfin_bench::seconds_between(start, end), last - first};
}

Figure heartbeats(std::uint64_t ticks) {
  Group group(3);
  group.node(1).campaign();
  group.run();
  const raft::Term term = group.node(1).term();
  const auto start = Clock::now();
  for (std::uint64_t t = 0; t < ticks; ++t) {
    for (auto& node : group.nodes) {
      node->tick();
    }
    group.run();
  }
  const auto end = Clock::now();
  if (group.node(1).role() != raft::Role::Leader || group.node(1).term() != term) {
    throw std::runtime_error("the leader changed while idle");
  }
  return {elfin_bench::seconds_between(start, end), ticks};
}

elfin_bench::Case replicate_case(std::size_t n) {
  const std::string name = fmt::format("replicate_{}_nodes_128", n);
  return {name, "replicate", [name, n](const Options& o) {
            const std::uint64_t entries = o.quick ? 20'000 : 400'000;
            return elfin_bench::run_case(
                kBench, name, o, [&] { return replicate(n, entries); }, {},
                fmt::format(" nodes={} payload=128 batch=64", n));
          }};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<elfin_bench::Case> cases;
  cases.push_back(replicate_case(3));
  cases.push_back(replicate_case(5));
  cases.push_back({"idle_heartbeat_3_nodes", "heartbeat", [](const Options& o) {
                     const std::uint64_t ticks = o.quick ? 20'000 : 400'000;
                     return elfin_bench::run_case(
                         kBench, "idle_heartbeat_3_nodes", o, [&] { return heartbeats(ticks); }, {}, " nodes=3");
                   }});
  return elfin_bench::run_main(kBench, std::move(cases), argc, argv);
}
