// The owner's node for an entity message.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include <elfin/actors/sharding/owner_node.hpp>
#include <elfin/addr.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>

namespace elfin::actors::sharding {

NodePick owner_node(std::shared_ptr<AssignmentCache> cache, std::string shard_function,
                    std::function<std::optional<std::string>(const Envelope&)> entity_id) {
  auto function = hashing::ShardFunction::parse(shard_function);
  if (!function)
    throw std::invalid_argument("actors::sharding::owner_node: " + shard_function + ": bad shard function");
  return [cache = std::move(cache), function = *function, entity_id = std::move(entity_id)](
             const Envelope& e, const std::vector<std::uint16_t>& connected) -> std::optional<std::uint16_t> {
    std::optional<std::uint32_t> shard;
    if (const auto* ask = e.get<protocols::sharding::ShardOwner>()) {
      // Asked where an entity message of this shard went: it goes the same way.
      shard = ask->shard;
    } else {
      auto id = entity_id ? entity_id(e) : std::nullopt;
      if (!id || id->empty()) return std::nullopt;
      auto found = function.shard_of(*id);
      if (!found) return std::nullopt;
      shard = *found;
    }
    const Route route = cache->route(*shard);
    if (route.local) return Addr{cache->endpoint()}.node_no();
    if (!route.owner) return std::nullopt;
    const std::uint16_t node = Addr{route.owner->endpoint}.node_no();
    if (std::find(connected.begin(), connected.end(), node) == connected.end()) {
      // The manager hears of it (rate-limited per pod) and moves the shards if the pod is dead.
      cache->note_unreachable(route.owner->pod);
      return std::nullopt;
    }
    return node;
  };
}

}  // namespace elfin::actors::sharding
