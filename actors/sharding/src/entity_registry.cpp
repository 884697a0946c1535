// The entities an entity group runs on this pod.
#include <elfin/actors/sharding/entity_registry.hpp>

namespace elfin::actors::sharding {

bool EntityRegistry::add(const std::string& id, std::uint32_t shard, std::uint64_t addr, OwnerToken token) {
  std::lock_guard lock(mutex_);
  auto [it, added] = entries_.try_emplace(id, Entry{shard, addr, std::move(token), Clock::now(), false});
  return added;
}

void EntityRegistry::remove(const std::string& id, std::uint64_t addr) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(id); it != entries_.end() && it->second.addr == addr) entries_.erase(it);
}

void EntityRegistry::touch(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(id); it != entries_.end()) it->second.last = Clock::now();
}

std::size_t EntityRegistry::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::optional<OwnerToken> EntityRegistry::token(const std::string& id) const {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(id); it != entries_.end()) return it->second.token;
  return std::nullopt;
}

std::vector<std::uint64_t> EntityRegistry::stop(const std::set<std::uint32_t>& shards) {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t> actors;
  for (auto& [id, entry] : entries_) {
    if (!shards.contains(entry.shard) || entry.stopping) continue;
    entry.stopping = true;
    actors.push_back(entry.addr);
  }
  return actors;
}

std::size_t EntityRegistry::running(const std::set<std::uint32_t>& shards) const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [id, entry] : entries_) {
    if (shards.contains(entry.shard)) ++n;
  }
  return n;
}

std::vector<std::uint64_t> EntityRegistry::idle(std::chrono::nanoseconds max_idle) {
  std::lock_guard lock(mutex_);
  const auto cutoff = Clock::now() - max_idle;
  std::vector<std::uint64_t> actors;
  for (auto& [id, entry] : entries_) {
    if (entry.stopping || entry.last > cutoff) continue;
    entry.stopping = true;
    actors.push_back(entry.addr);
  }
  return actors;
}

}  // namespace elfin::actors::sharding
