// The liveness actor (see liveness.hpp).
#include "liveness.hpp"

#include "wire.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <elfin/handle.hpp>
#include <elfin/interval.hpp>
#include <elfin/logging.hpp>
#include <elfin/protocols/raft.hpp>

namespace elfin::actors::partition::internal {

namespace {

namespace pr = protocols::raft;
using Clock = std::chrono::steady_clock;

struct LivenessTick {
  ELFIN_MESSAGE(partition_actor, LivenessTick);
  ELFIN_NO_DUMPING;
};

struct Peer {
  Clock::time_point heard;
  bool down = false;
  std::uint64_t incarnation = 0;  ///< its liveness actor's start stamp (0: not heard yet)
};

}  // namespace

Task<> liveness_exec(PartitionContext ctx) {
  const Config config = ctx.config();
  const std::uint64_t self = ctx.addr().node_no();
  // Coalescing, the actor ticks with the partitions (a beat waits at most one tick) and pings
  // every heartbeat interval, or sooner with beats to carry; else it ticks once per interval.
  const auto interval = config.coalesce_heartbeats ? config.tick : config.tick * config.heartbeat_ticks;
  const std::uint32_t ping_every = config.coalesce_heartbeats ? config.heartbeat_ticks : 1;
  const auto timeout = config.tick * config.election_ticks;
  // A peer whose stamp changes restarted: the partitions it led are gone even if it never fell
  // silent for a whole timeout.
  const auto incarnation = static_cast<std::uint64_t>(ctx.now().time_since_epoch().count()) + 1;
  // Every other node of `nodes`, and (placement "assignment", where `nodes` may be empty) every
  // node a quiesced partition's leader is on and every node that pings this one: a follower's
  // pings make its leader's node ping back. A node is assumed heard from when it is added.
  std::map<std::uint64_t, Peer> peers;
  const auto add_peer = [&](std::uint64_t node) {
    if (node == self || node == 0) return peers.end();
    return peers.try_emplace(node, Peer{ctx.now(), false}).first;
  };
  for (std::uint64_t node : config.nodes) add_peer(node);
  std::map<std::uint64_t, std::uint64_t> watching;              // quiesced partition -> its leader's node
  std::map<std::uint64_t, std::vector<std::uint64_t>> leading;  // leader partition -> its followers' nodes
  std::map<std::uint64_t, std::vector<pr::Beat>> beats;         // node -> the beats for its next ping
  std::uint32_t ticks_to_ping = 0;
  const auto tell_leaders = [&](std::uint64_t node, bool down) {
    for (const auto& [partition, followers] : leading) {
      if (std::find(followers.begin(), followers.end(), node) == followers.end()) continue;
      std::ignore = ctx.unbounded_send_to(ctx.group_addr(), FollowerLiveness{partition, node, down});
    }
  };
  const auto tell = [&](std::uint64_t partition, std::uint64_t node) {
    std::ignore = ctx.unbounded_send_to(ctx.group_addr(), LeaderDown{partition, node});
  };
  const auto gone = [&](std::uint64_t node) {
    tell_leaders(node, true);
    for (auto it = watching.begin(); it != watching.end();) {
      if (it->second == node) {
        tell(it->first, node);
        it = watching.erase(it);
      } else {
        ++it;
      }
    }
  };
  auto ticks = ctx.attach(Interval(LivenessTick{}));
  ticks.start(interval);
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const LivenessTick&) {
          const auto now = ctx.now();
          const bool ping_all = ticks_to_ping == 0;
          ticks_to_ping = ping_all ? ping_every - 1 : ticks_to_ping - 1;
          for (auto& [node, peer] : peers) {
            auto held = beats.find(node);
            if (ping_all || held != beats.end()) {
              pr::RaftMessage ping;
              ping.partition = kLivenessKey;
              ping.type = pr::MessageType::Heartbeat;
              ping.from = self;
              ping.to = node;
              ping.index = incarnation;
              if (held != beats.end()) {
                ping.beats = std::move(held->second);
                beats.erase(held);
              }
              // Not connected: nothing to ping (and the beats are lost, as they would be on the way).
              std::ignore = ctx.try_send(std::move(ping));
            }
            if (peer.down || now - peer.heard < timeout) continue;
            peer.down = true;
            log::info("partitions: node {} is silent for {} ms: waking the quiesced partitions it leads", node,
                      std::chrono::duration_cast<std::chrono::milliseconds>(now - peer.heard).count());
            gone(node);
          }
        },
        [&](const pr::RaftMessage& ping) {
          if (ping.to != self) return;
          auto it = add_peer(ping.from);
          if (it == peers.end()) return;
          Peer& peer = it->second;
          peer.heard = ctx.now();
          if (peer.down) {
            peer.down = false;
            log::info("partitions: node {} is back: waking the partitions that sleep without it", ping.from);
            tell_leaders(ping.from, false);
          }
          if (peer.incarnation != 0 && ping.index != peer.incarnation) {
            log::info("partitions: node {} restarted: waking the quiesced partitions it led", ping.from);
            gone(ping.from);
          }
          peer.incarnation = ping.index;
          for (const pr::Beat& beat : ping.beats) {
            // One per partition per tick at most: unbounded, like the partitions' own messages here.
            std::ignore = ctx.unbounded_send_to(ctx.group_addr(), from_beat(beat, ping.from, self));
          }
        },
        [&](const OutgoingBeat& out) {
          if (add_peer(out.to) == peers.end()) return;
          beats[out.to].push_back(out.beat);
        },
        [&](const WatchLeader& watch) {
          auto peer = add_peer(watch.leader);
          if (peer != peers.end() && peer->second.down) {
            tell(watch.partition, watch.leader);  // quiesced just as its leader's node went silent
            return;
          }
          watching[watch.partition] = watch.leader;
        },
        [&](const Unwatch& unwatch) { watching.erase(unwatch.partition); },
        [&](const WatchFollowers& watch) {
          for (std::uint64_t node : watch.followers) {
            auto peer = add_peer(node);
            if (peer != peers.end() && peer->second.down) {
              std::ignore = ctx.unbounded_send_to(ctx.group_addr(), FollowerLiveness{watch.partition, node, true});
            }
          }
          leading[watch.partition] = watch.followers;
        });
  }
}

}  // namespace elfin::actors::partition::internal
