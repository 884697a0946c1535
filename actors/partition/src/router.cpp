#include "router.hpp"

#include "liveness.hpp"

#include <algorithm>

#include <elfin/actors/partition.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/raft.hpp>

#include "placement.hpp"

namespace elfin::actors::partition {

namespace internal {

namespace {

namespace pr = protocols::raft;
using Out = Outcome<std::uint64_t>;

template <class M>
bool by_partition(const Envelope& e, Out& out) {
  if (const M* m = e.get<M>()) {
    out = Out::Unicast(m->partition);
    return true;
  }
  return false;
}

Out route(const Envelope& e) {
  if (e.is<ValidateConfig>()) return Out::Unicast(kValidatorKey);
  if (e.is<WatchLeader>() || e.is<Unwatch>() || e.is<WatchFollowers>() || e.is<OutgoingBeat>()) {
    return Out::Unicast(kLivenessKey);
  }
  if (e.is<pr::Placement>() || e.is<GetPlacement>()) return Out::Unicast(kPlacementKey);
  if (e.is<PlacementChanged>()) return Out::Broadcast();
  Out out = Out::Default();
  std::ignore = by_partition<pr::RaftMessage>(e, out) || by_partition<pr::Propose>(e, out) ||
                by_partition<pr::Read>(e, out) || by_partition<pr::GetPartitionStatus>(e, out) ||
                by_partition<pr::AddReplica>(e, out) || by_partition<pr::RemoveReplica>(e, out) ||
                by_partition<pr::TransferLeader>(e, out) || by_partition<LeaderDown>(e, out) ||
                by_partition<FollowerLiveness>(e, out) || by_partition<Wake>(e, out);
  return out;
}

}  // namespace

MapRouter<std::uint64_t> router() { return MapRouter<std::uint64_t>(route); }

}  // namespace internal

std::optional<std::uint16_t> peer_node(const Envelope& envelope, const std::vector<std::uint16_t>& connected) {
  const auto* m = envelope.get<protocols::raft::RaftMessage>();
  if (m == nullptr || m->to == 0 || m->to > UINT16_MAX) return std::nullopt;
  const auto node = static_cast<std::uint16_t>(m->to);
  if (std::find(connected.begin(), connected.end(), node) == connected.end()) return std::nullopt;
  return node;
}

}  // namespace elfin::actors::partition
