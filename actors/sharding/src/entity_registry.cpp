// The entities an entity group runs on this pod.
#include <elfin/actors/sharding/entity_registry.hpp>

#include <algorithm>

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

void EntityRegistry::pin(const std::string& id) {
  std::lock_guard lock(mutex_);
  pinned_.insert(id);
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

std::vector<std::uint64_t> EntityRegistry::running_actors(const std::set<std::uint32_t>& shards) const {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t> actors;
  for (const auto& [id, entry] : entries_) {
    if (shards.contains(entry.shard)) actors.push_back(entry.addr);
  }
  return actors;
}

std::vector<std::uint64_t> EntityRegistry::idle(std::chrono::nanoseconds max_idle) {
  std::lock_guard lock(mutex_);
  const auto cutoff = Clock::now() - max_idle;
  std::vector<std::uint64_t> actors;
  for (auto& [id, entry] : entries_) {
    if (entry.stopping || entry.last > cutoff || pinned_.contains(id)) continue;
    entry.stopping = true;
    actors.push_back(entry.addr);
  }
  return actors;
}

EntityRegistry::Via EntityRegistry::via(const std::string& id, const void* envelope, std::size_t max_held) {
  std::lock_guard lock(mutex_);
  auto hold = holds_.find(id);
  auto entry = entries_.find(id);
  if (hold != holds_.end() && hold->second.released.erase(envelope) != 0) {
    if (hold->second.held == 0 && hold->second.released.empty()) holds_.erase(hold);
    if (entry != entries_.end()) entry->second.last = Clock::now();
    return Via::Entity;
  }
  const bool stopping = entry != entries_.end() && entry->second.stopping;
  if (max_held > 0 && (stopping || hold != holds_.end())) {
    auto& held = holds_[id];
    if (held.held >= max_held) return Via::Refuse;
    ++held.held;
    return Via::Hold;
  }
  if (entry != entries_.end()) entry->second.last = Clock::now();
  return Via::Entity;
}

void EntityRegistry::release(const std::string& id, const void* envelope) {
  std::lock_guard lock(mutex_);
  auto& hold = holds_[id];
  if (hold.held > 0) --hold.held;
  hold.released.insert(envelope);
}

void EntityRegistry::rehold(const std::string& id) {
  std::lock_guard lock(mutex_);
  ++holds_[id].held;
}

void EntityRegistry::unhold(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto hold = holds_.find(id);
  if (hold == holds_.end()) return;
  if (hold->second.held > 0) --hold->second.held;
  if (hold->second.held == 0 && hold->second.released.empty()) holds_.erase(hold);
}

bool EntityRegistry::holding() const {
  std::lock_guard lock(mutex_);
  return std::any_of(holds_.begin(), holds_.end(), [](const auto& hold) { return hold.second.held > 0; });
}

bool EntityRegistry::listed(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return entries_.contains(id);
}

bool EntityRegistry::stopping(const std::string& id) const {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(id);
  return entry != entries_.end() && entry->second.stopping;
}

}  // namespace elfin::actors::sharding
