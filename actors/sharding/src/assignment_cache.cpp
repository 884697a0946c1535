// The pod's assignment cache: own shards by command and epoch, other pods' from the map.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/sharding/assignment_cache.hpp>

namespace elfin::actors::sharding {

namespace ps = protocols::sharding;

namespace {

/// The actors each host gives for `ask`, in one list.
template <class Ask>
std::vector<std::uint64_t> gather(const std::vector<std::shared_ptr<EntityHost>>& hosts, Ask ask) {
  std::vector<std::uint64_t> actors;
  for (const auto& host : hosts) {
    auto some = ask(*host);
    actors.insert(actors.end(), some.begin(), some.end());
  }
  return actors;
}

}  // namespace

void AssignmentCache::set_self(ps::PodRef self, std::uint64_t endpoint) {
  std::unique_lock lock(mutex_);
  self_ = std::move(self);
  endpoint_ = endpoint;
}

ps::PodRef AssignmentCache::self() const {
  std::shared_lock lock(mutex_);
  return self_;
}

std::uint64_t AssignmentCache::endpoint() const {
  std::shared_lock lock(mutex_);
  return endpoint_;
}

bool AssignmentCache::ready() const {
  std::shared_lock lock(mutex_);
  return ready_;
}

bool AssignmentCache::draining() const {
  std::shared_lock lock(mutex_);
  return draining_;
}

std::uint64_t AssignmentCache::epoch() const {
  std::shared_lock lock(mutex_);
  return epoch_;
}

std::uint64_t AssignmentCache::map_epoch() const {
  std::shared_lock lock(mutex_);
  return map_.epoch;
}

Route AssignmentCache::route(std::uint32_t shard) const {
  std::shared_lock lock(mutex_);
  Route route;
  route.epoch = epoch_;
  if (!ready_) return route;
  if (!draining_ && own_.contains(shard)) {
    route.local = true;
    return route;
  }
  auto owner = map_.owner(shard);
  // The map's entries for this pod are stale by construction: only commands decide them.
  if (owner && owner->pod != self_) route.owner = std::move(owner);
  return route;
}

bool AssignmentCache::owns(std::uint32_t shard) const {
  std::shared_lock lock(mutex_);
  return ready_ && !draining_ && own_.contains(shard);
}

std::vector<std::uint32_t> AssignmentCache::owned() const {
  std::shared_lock lock(mutex_);
  std::vector<std::uint32_t> shards;
  if (draining_) return shards;
  for (const auto& [shard, epoch] : own_) shards.push_back(shard);
  return shards;
}

std::optional<std::uint64_t> AssignmentCache::held_epoch(std::uint32_t shard) const {
  std::shared_lock lock(mutex_);
  if (auto it = own_.find(shard); it != own_.end()) return it->second;
  return std::nullopt;
}

ps::NotOwner AssignmentCache::not_owner(std::uint32_t shard) const {
  const Route r = route(shard);
  return ps::NotOwner{shard, r.epoch, r.owner};
}

std::vector<ps::PodEntry> AssignmentCache::pods() const {
  std::shared_lock lock(mutex_);
  return map_.pods;
}

bool AssignmentCache::apply(const ps::Assignments& map) {
  std::unique_lock lock(mutex_);
  if (ready_ && map.epoch < map_.epoch) return false;
  map_ = map;
  ready_ = true;
  epoch_ = std::max(epoch_, map.epoch);
  return true;
}

std::optional<ps::ShardingError> AssignmentCache::check(const ps::PodRef& pod, const std::vector<std::uint32_t>& shards,
                                                        std::uint64_t epoch) const {
  if (pod != self_) {
    return ps::ShardingError{ps::ShardingErrorKind::WrongIncarnation,
                             fmt::format("this is {}, the command is for {}", self_, pod), std::nullopt};
  }
  for (auto shard : shards) {
    if (auto it = last_epoch_.find(shard); it != last_epoch_.end() && it->second > epoch) {
      return ps::ShardingError{ps::ShardingErrorKind::StaleEpoch,
                               fmt::format("shard {} is at epoch {}, the command at {}", shard, it->second, epoch),
                               std::nullopt};
    }
  }
  return std::nullopt;
}

Result<Unit, ps::ShardingError> AssignmentCache::assign(const ps::PodRef& pod, const std::vector<std::uint32_t>& shards,
                                                        std::uint64_t epoch) {
  std::unique_lock lock(mutex_);
  if (auto error = check(pod, shards, epoch)) return Err{std::move(*error)};
  if (draining_) return Err{ps::ShardingError{ps::ShardingErrorKind::Draining, "the pod is stopping", std::nullopt}};
  for (auto shard : shards) {
    own_[shard] = epoch;
    last_epoch_[shard] = epoch;
  }
  epoch_ = std::max(epoch_, epoch);
  return Unit{};
}

Result<Unit, ps::ShardingError> AssignmentCache::unassign(const ps::PodRef& pod,
                                                          const std::vector<std::uint32_t>& shards,
                                                          std::uint64_t epoch) {
  std::unique_lock lock(mutex_);
  if (auto error = check(pod, shards, epoch)) return Err{std::move(*error)};
  for (auto shard : shards) {
    own_.erase(shard);
    last_epoch_[shard] = epoch;
  }
  epoch_ = std::max(epoch_, epoch);
  return Unit{};
}

void AssignmentCache::start_draining() {
  std::unique_lock lock(mutex_);
  draining_ = true;
}

void AssignmentCache::note_unreachable(const ps::PodRef& pod) {
  std::unique_lock lock(mutex_);
  unreachable_.insert(pod);
}

std::vector<ps::PodRef> AssignmentCache::take_unreachable() {
  std::unique_lock lock(mutex_);
  std::vector<ps::PodRef> pods(unreachable_.begin(), unreachable_.end());
  unreachable_.clear();
  return pods;
}

void AssignmentCache::add_host(std::weak_ptr<EntityHost> host) {
  std::unique_lock lock(mutex_);
  std::erase_if(hosts_, [](const std::weak_ptr<EntityHost>& h) { return h.expired(); });
  hosts_.push_back(std::move(host));
}

std::vector<std::shared_ptr<EntityHost>> AssignmentCache::hosts() const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<EntityHost>> hosts;
  for (const auto& weak : hosts_) {
    if (auto host = weak.lock()) hosts.push_back(std::move(host));
  }
  return hosts;
}

std::vector<std::uint64_t> AssignmentCache::stop_entities(const std::set<std::uint32_t>& shards) const {
  return gather(hosts(), [&](EntityHost& host) { return host.stop(shards); });
}

std::vector<std::uint64_t> AssignmentCache::idle_entities(std::chrono::nanoseconds max_idle) const {
  return gather(hosts(), [&](EntityHost& host) { return host.idle(max_idle); });
}

std::size_t AssignmentCache::running_entities(const std::set<std::uint32_t>& shards) const {
  std::size_t running = 0;
  for (const auto& host : hosts()) running += host->running(shards);
  return running;
}

std::vector<std::uint64_t> AssignmentCache::running_entity_actors(const std::set<std::uint32_t>& shards) const {
  return gather(hosts(), [&](EntityHost& host) { return host.running_actors(shards); });
}

bool AssignmentCache::holding_messages() const {
  const auto all = hosts();
  return std::any_of(all.begin(), all.end(), [](const auto& host) { return host->holding(); });
}

std::vector<std::uint64_t> AssignmentCache::wake_hosts(const std::set<std::uint32_t>& shards) const {
  std::vector<std::uint64_t> groups;
  for (const auto& host : hosts()) {
    auto some = host->wake(shards);
    groups.insert(groups.end(), some.begin(), some.end());
  }
  return groups;
}

void AssignmentCache::add_group(std::string name, std::uint64_t addr) {
  std::unique_lock lock(mutex_);
  groups_[std::move(name)] = addr;
}

std::uint64_t AssignmentCache::group(const std::string& name) const {
  std::shared_lock lock(mutex_);
  auto it = groups_.find(name);
  return it == groups_.end() ? 0 : it->second;
}

std::uint64_t AssignmentCache::remote_group(const ps::PodRef& pod, const std::string& name) const {
  std::shared_lock lock(mutex_);
  auto it = remote_groups_.find({pod, name});
  return it == remote_groups_.end() ? 0 : it->second;
}

void AssignmentCache::remember_remote_group(const ps::PodRef& pod, const std::string& name, std::uint64_t addr) {
  std::unique_lock lock(mutex_);
  // Pods that left the map are forgotten, so the memo stays as small as the cluster.
  std::erase_if(remote_groups_, [&](const auto& entry) {
    return std::none_of(map_.pods.begin(), map_.pods.end(),
                        [&](const ps::PodEntry& e) { return e.pod == entry.first.first; });
  });
  remote_groups_[{pod, name}] = addr;
}

}  // namespace elfin::actors::sharding
