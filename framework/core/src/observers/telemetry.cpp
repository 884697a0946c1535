#include <elfin/telemetry.hpp>

#include <algorithm>
#include <map>
#include <mutex>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include "actor/current_actor.hpp"
#include "observers/metrics_storage.hpp"

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

namespace {

// Help texts of metric families, process-wide like the message registry: a family's meaning does
// not depend on the system recording it. Read once per family and scrape, so a mutex is cheap.
struct Descriptions {
  std::mutex mu;
  std::map<std::string, std::string, std::less<>> help;
};

Descriptions& descriptions() {
  static Descriptions* d = [] {
    auto* out = new Descriptions;  // NOLINT(cppcoreguidelines-owning-memory): lives as long as the process
    for (const auto& [name, help] : std::initializer_list<std::pair<const char*, const char*>>{
             {"elfin_sent_messages_total", "Messages the group's actors sent (a multicast counts once)"},
             {"elfin_message_handling_time_seconds", "Time from receiving a message to the next recv, by message"},
             {"elfin_message_waiting_time_seconds", "Time from send to receive (in the mailbox), sampled"},
             {"elfin_busy_time_seconds", "Each run of an actor on a worker, from resume to suspend"},
             {"elfin_actor_status_changes_total", "Actor status changes, by the status entered"},
             {"elfin_requests_total", "Requests the group's actors made, by how they ended (Ok, Failed, Ignored)"},
             {"elfin_request_time_seconds", "Time from sending a request to its answer, as the requester saw it"},
             {"elfin_active_actors", "Actors alive now, by status"},
             {"elfin_restarting_actors", "Actors waiting for their restart"},
             {"elfin_restarts_total", "Actors restarted by the group's restart policy"},
             {"elfin_emitted_events_total", "Log records emitted by the group's actors, by level"},
             {"elfin_limited_events_total", "Log records dropped by the logging rate limit, by level"},
             {"elfin_lost_events_total", "Log records lost because the logger could not keep up, by level"},
             {"elfin_emitted_dumps_total", "Messages dumped"},
             {"elfin_limited_dumps_total", "Messages not dumped because of the dumping rate limit"},
             {"elfin_lost_dumps_total", "Dumps dropped because the dumper fell behind (its storage was full)"},
         }) {
      out->help.emplace(name, help);
    }
    return out;
  }();
  return *d;
}

}  // namespace

std::string help_of(std::string_view name) {
  auto& d = descriptions();
  std::lock_guard lock(d.mu);
  auto it = d.help.find(name);
  return it == d.help.end() ? std::string{} : it->second;
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
// The last entry of t_shards this thread used: the hot path's one compare (a thread records for
// one system nearly always).
thread_local ShardCache t_last_shard;

// The key text a GroupSeries is found by: "" without an actor key, "\0" + text with one (so an
// empty key text differs from none).
std::string series_key(const std::shared_ptr<const std::string>& actor_key) {
  if (actor_key == nullptr) return {};
  std::string out(1, '\0');
  out += *actor_key;
  return out;
}

// What makes two series one at scrape: their labels, by value (two actors with one key, one after
// the other, hold different copies of the key text).
struct SeriesId {
  const std::string* name = nullptr;  // interned
  const GroupRuntime* group = nullptr;
  bool has_key = false;
  std::string actor_key;
  const MessageVTable* message = nullptr;
  std::int8_t status = -1;
  std::int8_t outcome = -1;  // RequestOutcome, for elfin_requests_total
  friend bool operator==(const SeriesId&, const SeriesId&) = default;
};

struct SeriesIdHash {
  std::size_t operator()(const SeriesId& k) const noexcept {
    std::size_t h = std::hash<const void*>{}(k.name);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<const void*>{}(k.group));
    mix(std::hash<std::string>{}(k.actor_key) + (k.has_key ? 1 : 0));
    mix(std::hash<const void*>{}(k.message));
    mix(static_cast<std::size_t>(k.status + 1));
    mix(static_cast<std::size_t>(k.outcome + 1));
    return h;
  }
};

constexpr std::array<const char*, kRequestOutcomes> kOutcomeNames{"Ok", "Failed", "Ignored"};

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
  calibrate_telemetry_clock();  // before anything is measured: every reading then uses one clock
  names_.sent_messages = intern("elfin_sent_messages_total");
  names_.handling_time = intern("elfin_message_handling_time_seconds");
  names_.waiting_time = intern("elfin_message_waiting_time_seconds");
  names_.busy_time = intern("elfin_busy_time_seconds");
  names_.status_changes = intern("elfin_actor_status_changes_total");
  names_.requests = intern("elfin_requests_total");
  names_.request_time = intern("elfin_request_time_seconds");
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
  if (t_last_shard.storage_id == id_) return *static_cast<Shard*>(t_last_shard.shard);
  for (const auto& entry : t_shards) {
    if (entry.storage_id == id_) {
      t_last_shard = entry;
      return *static_cast<Shard*>(entry.shard);
    }
  }
  Shard* mine = nullptr;
  {
    std::lock_guard lock(mu_);
    mine = shards_.emplace_back(std::make_unique<Shard>()).get();
  }
  t_shards.push_back(ShardCache{id_, mine});
  t_last_shard = t_shards.back();
  return *mine;
}

GroupSeries* MetricsStorage::series(const GroupRuntime* group, const std::shared_ptr<const std::string>& actor_key) {
  Shard& s = shard();
  std::lock_guard lock(s.lock);  // the scraper walks the map
  auto& slot = s.series[group][series_key(actor_key)];
  if (slot == nullptr) slot = std::make_unique<GroupSeries>(group, actor_key);
  return slot.get();
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
  std::unordered_map<SeriesId, MetricValue, SeriesIdHash> sum;
  auto add = [&sum](SeriesId id, const MetricValue& value) {
    auto [it, inserted] = sum.try_emplace(std::move(id), value);
    if (inserted) return;
    MetricValue& total = it->second;
    total.counter += value.counter;
    total.histogram.merge(value.histogram);
    if (value.gauge_stamp > total.gauge_stamp) {
      total.gauge = value.gauge;
      total.gauge_stamp = value.gauge_stamp;
    }
  };
  auto histogram = [](const SeriesHistogram& h) {
    MetricValue v;
    v.kind = telemetry::MetricKind::Histogram;
    v.histogram = h.load();
    return v;
  };
  {
    std::lock_guard lock(mu_);
    for (const auto& s : shards_) {
      std::lock_guard shard_lock(s->lock);
      for (const auto& [key, value] : s->values) {
        add(SeriesId{key.name, key.group, key.actor_key != nullptr, key.actor_key != nullptr ? *key.actor_key : "",
                     key.message, key.status},
            value);
      }
      for (const auto& [group_binding, by_key] : s->series) {
        const auto group = group_binding;  // a lambda cannot capture a structured binding (C++20, clang 14)
        for (const auto& [text, series] : by_key) {
          const auto& actor_key = series->actor_key();
          auto id = [&](const std::string* name, const MessageVTable* message) {
            return SeriesId{name, group, actor_key != nullptr, actor_key != nullptr ? *actor_key : "", message, -1};
          };
          // A series appears once something was recorded in it, as the map-held ones do.
          if (auto waiting = histogram(series->waiting); waiting.histogram.count > 0)
            add(id(names_.waiting_time, nullptr), waiting);
          if (auto busy = histogram(series->busy); busy.histogram.count > 0) add(id(names_.busy_time, nullptr), busy);
          series->for_each_message([&](const MessageSeries& m) {
            const MessageVTable* message = m.message.load(std::memory_order_acquire);
            if (const std::uint64_t sent = m.sent.load(); sent > 0) {
              MetricValue v;
              v.counter = sent;
              add(id(names_.sent_messages, message), v);
            }
            if (auto handling = histogram(m.handling); handling.histogram.count > 0)
              add(id(names_.handling_time, message), handling);
            for (std::size_t o = 0; o < kRequestOutcomes; ++o) {
              if (const std::uint64_t n = m.requests[o].load(); n > 0) {
                MetricValue v;
                v.counter = n;
                SeriesId requests = id(names_.requests, message);
                requests.outcome = static_cast<std::int8_t>(o);
                add(std::move(requests), v);
              }
            }
            if (auto took = histogram(m.request_time); took.histogram.count > 0)
              add(id(names_.request_time, message), took);
          });
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
    if (key.has_key) sample.labels.emplace_back("actor_key", key.actor_key);
    if (key.message != nullptr) {
      sample.labels.emplace_back("message", std::string{key.message->name});
      sample.labels.emplace_back("protocol", std::string{key.message->protocol});
    }
    if (key.status >= 0) {
      sample.labels.emplace_back("status", std::string{to_string(static_cast<ActorStatusKind>(key.status))});
    }
    if (key.outcome >= 0) sample.labels.emplace_back("outcome", kOutcomeNames[static_cast<unsigned char>(key.outcome)]);
    sample.kind = value.kind;
    sample.value = value.kind == telemetry::MetricKind::Counter ? static_cast<double>(value.counter) : value.gauge;
    sample.histogram = value.histogram;
    out.push_back(std::move(sample));
  }
  return out;
}

telemetry::Histogram SeriesHistogram::load() const {
  telemetry::Histogram h;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    h.counts[i] = counts_[i].load(std::memory_order_relaxed);
    h.count += h.counts[i];  // _count is the buckets as read, so it always equals +Inf
  }
  h.sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) * 1e-9;
  return h;
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

GroupSeries& GroupTelemetry::series(ActorCell& cell) {
  const bool keyed = per_actor_key_.load(std::memory_order_relaxed);
  ActorTelemetry& t = cell.telemetry_;
  if (t.series_thread == this_thread_tag() && t.series_keyed == keyed) [[likely]]
    return *t.series;
  return refresh_series(cell, keyed);
}

GroupSeries& GroupTelemetry::refresh_series(ActorCell& cell, bool keyed) {
  static const std::shared_ptr<const std::string> kNone;
  ActorTelemetry& t = cell.telemetry_;
  t.series = storage_->series(group_, keyed ? cell.key_for_dumps() : kNone);
  t.series_thread = this_thread_tag();
  t.series_keyed = keyed;
  return *t.series;
}

void GroupTelemetry::count_sent(ActorCell& cell, const MessageVTable& message) {
  cell.telemetry_.sent.get(series(cell), message).sent.add(1);
}

void GroupTelemetry::count_request(ActorCell& cell, const MessageVTable& request, RequestOutcome outcome,
                                   std::uint64_t ns) {
  MessageSeries& m = cell.telemetry_.sent.get(series(cell), request);
  m.requests[static_cast<std::size_t>(outcome)].add(1);
  m.request_time.record_ns(ns);
}

void GroupTelemetry::close_window(ActorCell& cell, GroupSeries& s, TelemetryStamp now) {
  ActorTelemetry& t = cell.telemetry_;
  const std::uint64_t ns = telemetry_elapsed_ns(t.since, now);
  SeriesHistogram& handling = t.handled.get(s, *t.handling).handling;
  if (t.pending <= 1) {
    handling.record_ns(ns);
    t.calm = ns <= ActorTelemetry::kCalmNs ? t.calm + 1 : 0;
  } else {
    handling.record_window(t.pending, ns);
    if (ns > SeriesHistogram::kBoundsNs[0]) t.calm = 0;  // slowed down: per message again
  }
  t.handling = nullptr;
  t.pending = 0;
}

void GroupTelemetry::on_receive(ActorCell& cell, const MessageVTable* received, TelemetryStamp sent_at) {
  ActorTelemetry& t = cell.telemetry_;
  if (t.joins_window(received, sent_at)) {
    ++t.pending;
    return;
  }
  // One clock read serves the end of the previous handling (window), the start of the next one
  // and the end of the received message's wait.
  const TelemetryStamp now = telemetry_stamp();
  GroupSeries& s = series(cell);
  if (t.handling != nullptr) close_window(cell, s, now);
  if (received == nullptr) return;
  t.handling = received;
  t.since = now;
  t.pending = 1;
  if (sent_at != 0) s.waiting.record_ns(telemetry_elapsed_ns(sent_at, now));
}

void GroupTelemetry::end_run(ActorCell& cell, TelemetryStamp started, bool finished) {
  const TelemetryStamp now = telemetry_stamp();
  GroupSeries& s = series(cell);
  s.busy.record_ns(telemetry_elapsed_ns(started, now));
  if (finished && cell.telemetry_.handling != nullptr) close_window(cell, s, now);
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

void describe(std::string_view name, std::string_view help) {
  auto& d = telemetry::descriptions();
  std::lock_guard lock(d.mu);
  d.help.insert_or_assign(std::string(name), std::string(help));
}

void record_histogram(std::string_view name, double value) {
  with_current_actor(name, [value](auto& storage, const auto& key, const auto& owner) {
    storage.record_histogram(key, value, owner);
  });
}

}  // namespace metrics
}  // namespace elfin
