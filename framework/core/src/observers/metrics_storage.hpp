// MetricsStorage: where a system's metrics live between recording and scraping.
//
// Each recording thread owns a shard (found through a thread-local cache keyed by the storage's
// unique id, so a thread that outlives one system never writes into the next one's memory). A shard
// holds two kinds of series:
// - the per-message built-ins (sent, handling, waiting, busy) in one GroupSeries per group (and
//   actor key): lock-free, written only by the shard's thread; actors cache a pointer to it, so the
//   hot path neither looks up nor locks (see group_series.hpp);
// - everything else (status changes, actors' own metrics) in a map under a spin lock that only
//   its thread and the scraper take: an uncontended lock, a hash lookup and an add.
// The scraper sums the shards, merging series with the same labels.
//
// Thread safety: `shard()` and the record functions from any thread; `snapshot` from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/detail/group_series.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/message.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::detail {

class GroupRuntime;

/// Identifies a series: group, optional actor key, metric name, and the optional labels the
/// built-in metrics use (message/protocol, status).
struct MetricKey {
  const GroupRuntime* group = nullptr;
  const std::string* actor_key = nullptr;  ///< set only with per_actor_key
  const std::string* name = nullptr;       ///< interned by the storage
  const MessageVTable* message = nullptr;
  std::int8_t status = -1;  ///< an ActorStatusKind, or -1
  friend bool operator==(const MetricKey&, const MetricKey&) = default;
};

struct MetricKeyHash {
  std::size_t operator()(const MetricKey& k) const noexcept;
};

struct MetricValue {
  telemetry::MetricKind kind = telemetry::MetricKind::Counter;
  std::uint64_t counter = 0;
  double gauge = 0;
  std::uint64_t gauge_stamp = 0;  ///< orders gauge writes across shards: the newest wins
  telemetry::Histogram histogram;
  std::shared_ptr<const std::string> actor_key_owner;  ///< keeps `MetricKey::actor_key` alive
};

class MetricsStorage {
 public:
  // The runtime's own series names (interned once, compared by pointer).
  struct Names {
    const std::string* sent_messages;
    const std::string* handling_time;
    const std::string* waiting_time;
    const std::string* busy_time;
    const std::string* status_changes;
    const std::string* requests;
    const std::string* request_time;
  };

  MetricsStorage();
  MetricsStorage(const MetricsStorage&) = delete;
  MetricsStorage& operator=(const MetricsStorage&) = delete;
  ~MetricsStorage();

  [[nodiscard]] const Names& names() const { return names_; }
  /// The stable copy of `name`.
  [[nodiscard]] const std::string* intern(std::string_view name);
  /// `intern`, through the calling thread's cache (no shared lock after the first use).
  [[nodiscard]] const std::string* name_of(std::string_view name);

  void add_counter(const MetricKey& key, std::uint64_t by, const std::shared_ptr<const std::string>& key_owner);
  void set_gauge(const MetricKey& key, double value, const std::shared_ptr<const std::string>& key_owner);
  void record_histogram(const MetricKey& key, double value, const std::shared_ptr<const std::string>& key_owner);

  /// The calling thread's GroupSeries of `group` (with `actor_key`, or none for null), made on
  /// first use. It lives as long as this storage.
  [[nodiscard]] GroupSeries* series(const GroupRuntime* group, const std::shared_ptr<const std::string>& actor_key);

  /// Every series summed over the shards, labelled.
  [[nodiscard]] std::vector<telemetry::MetricSample> snapshot() const;

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    SpinLock lock;
    std::unordered_map<MetricKey, MetricValue, MetricKeyHash> values;  // guarded by lock
    // The built-ins' lock-free series, by group and actor key text ("\0" + text, or "" for none).
    // The map is changed and walked under `lock`; the series themselves are not guarded by it.
    std::unordered_map<const GroupRuntime*, std::unordered_map<std::string, std::unique_ptr<GroupSeries>>> series;
    // This thread's view of the interned names (owner thread only), so interning is lock-free
    // after a name's first use on the thread.
    std::unordered_map<std::string, const std::string*, NameHash, std::equal_to<>> names;
  };
  Shard& shard();
  template <class Update>
  void update(const MetricKey& key, telemetry::MetricKind kind, const std::shared_ptr<const std::string>& key_owner,
              Update&& apply);

  const std::uint64_t id_;
  Names names_{};
  mutable std::mutex mu_;
  std::unordered_set<std::string> interned_;    // guarded by mu_; node-based, so pointers stay valid
  std::vector<std::unique_ptr<Shard>> shards_;  // guarded by mu_
  std::atomic<std::uint64_t> gauge_clock_{0};
};

}  // namespace elfin::detail
