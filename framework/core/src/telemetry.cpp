#include <elfin/telemetry.hpp>

#include <algorithm>
#include <map>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/current_actor.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/metrics_storage.hpp>

namespace elfin {

namespace telemetry {

void Histogram::record(double value) {
  auto bucket = std::lower_bound(kBuckets.begin(), kBuckets.end(), value) - kBuckets.begin();
  ++counts[static_cast<std::size_t>(bucket)];
  ++count;
  sum += value;
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
  count += other.count;
  sum += other.sum;
}

}  // namespace telemetry

namespace detail {

namespace {

std::atomic<std::uint64_t> g_next_storage_id{1};

// This thread's shard of each storage it has written to, by storage id. Ids are never reused, so
// an entry of a destroyed storage is never looked up again.
struct ShardCache {
  std::uint64_t storage_id = 0;
  void* shard = nullptr;
};
thread_local std::vector<ShardCache> t_shards;

}  // namespace

std::size_t MetricKeyHash::operator()(const MetricKey& k) const noexcept {
  std::size_t h = std::hash<const void*>{}(k.group);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<const void*>{}(k.actor_key));
  mix(std::hash<const void*>{}(k.name));
  mix(std::hash<const void*>{}(k.message));
  mix(static_cast<std::size_t>(k.status + 1));
  return h;
}

MetricsStorage::MetricsStorage() : id_(g_next_storage_id.fetch_add(1, std::memory_order_relaxed)) {
  names_.sent_messages = intern("elfin_sent_messages_total");
  names_.handling_time = intern("elfin_message_handling_time_seconds");
  names_.waiting_time = intern("elfin_message_waiting_time_seconds");
  names_.busy_time = intern("elfin_busy_time_seconds");
  names_.status_changes = intern("elfin_actor_status_changes_total");
}

MetricsStorage::~MetricsStorage() = default;

const std::string* MetricsStorage::intern(std::string_view name) {
  std::lock_guard lock(mu_);
  return &*interned_.emplace(name).first;
}

const std::string* MetricsStorage::name_of(std::string_view name) {
  auto& names = shard().names;
  if (auto it = names.find(name); it != names.end()) return it->second;
  const std::string* interned = intern(name);
  names.emplace(*interned, interned);
  return interned;
}

MetricsStorage::Shard& MetricsStorage::shard() {
  for (const auto& entry : t_shards) {
    if (entry.storage_id == id_) return *static_cast<Shard*>(entry.shard);
  }
  Shard* mine = nullptr;
  {
    std::lock_guard lock(mu_);
    mine = shards_.emplace_back(std::make_unique<Shard>()).get();
  }
  t_shards.push_back(ShardCache{id_, mine});
  return *mine;
}

template <class Update>
void MetricsStorage::update(const MetricKey& key, telemetry::MetricKind kind,
                            const std::shared_ptr<const std::string>& key_owner, Update&& apply) {
  Shard& s = shard();
  std::lock_guard lock(s.lock);
  auto [it, inserted] = s.values.try_emplace(key);
  if (inserted) {
    it->second.kind = kind;
    it->second.actor_key_owner = key_owner;
  }
  apply(it->second);
}

void MetricsStorage::add_counter(const MetricKey& key, std::uint64_t by,
                                 const std::shared_ptr<const std::string>& key_owner) {
  update(key, telemetry::MetricKind::Counter, key_owner, [by](MetricValue& v) { v.counter += by; });
}

void MetricsStorage::set_gauge(const MetricKey& key, double value,
                               const std::shared_ptr<const std::string>& key_owner) {
  const std::uint64_t stamp = gauge_clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  update(key, telemetry::MetricKind::Gauge, key_owner, [&](MetricValue& v) {
    v.gauge = value;
    v.gauge_stamp = stamp;
  });
}

void MetricsStorage::record_histogram(const MetricKey& key, double value,
                                      const std::shared_ptr<const std::string>& key_owner) {
  update(key, telemetry::MetricKind::Histogram, key_owner, [value](MetricValue& v) { v.histogram.record(value); });
}

std::vector<telemetry::MetricSample> MetricsStorage::snapshot() const {
  std::unordered_map<MetricKey, MetricValue, MetricKeyHash> sum;
  {
    std::lock_guard lock(mu_);
    for (const auto& s : shards_) {
      std::lock_guard shard_lock(s->lock);
      for (const auto& [key, value] : s->values) {
        auto [it, inserted] = sum.try_emplace(key, value);
        if (inserted) continue;
        MetricValue& total = it->second;
        total.counter += value.counter;
        total.histogram.merge(value.histogram);
        if (value.gauge_stamp > total.gauge_stamp) {
          total.gauge = value.gauge;
          total.gauge_stamp = value.gauge_stamp;
        }
      }
    }
  }
  std::vector<telemetry::MetricSample> out;
  out.reserve(sum.size());
  for (auto& [key, value] : sum) {
    telemetry::MetricSample sample;
    sample.name = *key.name;
    if (key.group != nullptr) sample.labels.emplace_back("actor_group", key.group->name());
    if (key.actor_key != nullptr) sample.labels.emplace_back("actor_key", *key.actor_key);
    if (key.message != nullptr) {
      sample.labels.emplace_back("message", std::string{key.message->name});
      sample.labels.emplace_back("protocol", std::string{key.message->protocol});
    }
    if (key.status >= 0) {
      sample.labels.emplace_back("status", std::string{to_string(static_cast<ActorStatusKind>(key.status))});
    }
    sample.kind = value.kind;
    sample.value = value.kind == telemetry::MetricKind::Counter ? static_cast<double>(value.counter) : value.gauge;
    sample.histogram = value.histogram;
    out.push_back(std::move(sample));
  }
  return out;
}

// --- GroupTelemetry ---------------------------------------------------------------------------

void GroupTelemetry::attach(MetricsStorage* storage, const GroupRuntime* group) {
  storage_ = storage;
  group_ = group;
  active_.store(storage != nullptr, std::memory_order_relaxed);
}

void GroupTelemetry::configure(const TelemetryConfig& config) {
  per_actor_key_.store(config.per_actor_key, std::memory_order_relaxed);
}

const std::shared_ptr<const std::string>& GroupTelemetry::key_owner(ActorCell& cell) {
  static const std::shared_ptr<const std::string> kNone;
  return per_actor_key_.load(std::memory_order_relaxed) ? cell.key_for_dumps() : kNone;
}

MetricKey GroupTelemetry::key(ActorCell& cell, const std::string* name, const MessageVTable* message,
                              std::int8_t status) {
  return MetricKey{group_, key_owner(cell).get(), name, message, status};
}

void GroupTelemetry::count_sent(ActorCell& cell, const MessageVTable& message) {
  storage_->add_counter(key(cell, storage_->names().sent_messages, &message), 1, key_owner(cell));
}

void GroupTelemetry::on_receive(ActorCell& cell, const MessageVTable* received,
                                std::chrono::steady_clock::time_point sent_at) {
  using Seconds = std::chrono::duration<double>;
  const auto now = std::chrono::steady_clock::now();
  if (cell.handling_ != nullptr) {
    storage_->record_histogram(key(cell, storage_->names().handling_time, cell.handling_),
                               Seconds(now - cell.handling_since_).count(), key_owner(cell));
  }
  cell.handling_ = received;
  cell.handling_since_ = now;
  if (received != nullptr && sent_at != std::chrono::steady_clock::time_point{}) {
    storage_->record_histogram(key(cell, storage_->names().waiting_time),
                               Seconds(std::max(now - sent_at, std::chrono::steady_clock::duration::zero())).count(),
                               key_owner(cell));
  }
}

void GroupTelemetry::record_busy(ActorCell& cell, std::chrono::steady_clock::duration busy) {
  storage_->record_histogram(key(cell, storage_->names().busy_time), std::chrono::duration<double>(busy).count(),
                             key_owner(cell));
}

void GroupTelemetry::on_status(ActorCell& cell, std::optional<ActorStatusKind> from,
                               std::optional<ActorStatusKind> to) {
  if (from) by_status_[static_cast<std::size_t>(*from)].fetch_sub(1, std::memory_order_relaxed);
  if (to) {
    by_status_[static_cast<std::size_t>(*to)].fetch_add(1, std::memory_order_relaxed);
    storage_->add_counter(key(cell, storage_->names().status_changes, nullptr, static_cast<std::int8_t>(*to)), 1,
                          key_owner(cell));
  }
}

std::array<std::int64_t, 6> GroupTelemetry::actors_by_status() const {
  std::array<std::int64_t, 6> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = by_status_[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace detail

namespace metrics {

namespace {

template <class Record>
void with_current_actor(std::string_view name, Record&& record) {
  detail::ActorCell* cell = detail::t_current_actor;
  if (cell == nullptr) return;
  auto& telemetry = cell->group().telemetry();
  if (!telemetry.active()) return;
  auto* storage = telemetry.storage();
  record(*storage, telemetry.key(*cell, storage->name_of(name)), telemetry.key_owner(*cell));
}

}  // namespace

void increment_counter(std::string_view name, std::uint64_t by) {
  with_current_actor(name,
                     [by](auto& storage, const auto& key, const auto& owner) { storage.add_counter(key, by, owner); });
}

void set_gauge(std::string_view name, double value) {
  with_current_actor(
      name, [value](auto& storage, const auto& key, const auto& owner) { storage.set_gauge(key, value, owner); });
}

void record_histogram(std::string_view name, double value) {
  with_current_actor(name, [value](auto& storage, const auto& key, const auto& owner) {
    storage.record_histogram(key, value, owner);
  });
}

}  // namespace metrics
}  // namespace elfin
