#include <algorithm>

#include <elfin/actors/kv.hpp>
#include <elfin/hashing/jump_hash.hpp>
#include <elfin/hashing/xxh64.hpp>

namespace elfin::actors::kv {

protocols::kv::ShardId shard_of(std::string_view key, protocols::kv::ShardId shards) noexcept {
  return hashing::jump_hash(hashing::xxh64(key), shards);
}

std::optional<std::uint16_t> shard_request_node(const Envelope& envelope, const std::vector<std::uint16_t>& connected) {
  const auto* request = envelope.get<protocols::kv::ShardRequest>();
  if (request == nullptr) return std::nullopt;
  if (std::find(connected.begin(), connected.end(), request->node) == connected.end()) return std::nullopt;
  return request->node;
}

}  // namespace elfin::actors::kv
