// GroupTelemetry: one group's side of telemetry — whether it is measured, with which labels, and
// how many of its actors are in each status — and the hooks the runtime calls.
//
// The hooks cost one relaxed load when telemetry is off (no `system.telemeters`). When it is on,
// the per-message ones (sent, receive, busy) write the running thread's GroupSeries of the group,
// which the actor caches: no lookup and no lock per message.
//
// Thread safety: hooks from the thread running the actor; `configure` from any thread; the status
// counts are atomics read by the scraper.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include <elfin/actor_status.hpp>
#include <elfin/detail/group_series.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/message.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::detail {

class ActorCell;
class GroupRuntime;
class MetricsStorage;
struct MetricKey;

class GroupTelemetry {
 public:
  void attach(MetricsStorage* storage, const GroupRuntime* group);
  void configure(const TelemetryConfig& config);
  [[nodiscard]] bool active() const { return active_.load(std::memory_order_relaxed); }
  [[nodiscard]] MetricsStorage* storage() const { return storage_; }

  /// The series key of `name` for `cell` (with its actor key if the group asks for it).
  [[nodiscard]] MetricKey key(ActorCell& cell, const std::string* name, const MessageVTable* message = nullptr,
                              std::int8_t status = -1);
  /// The owner to keep alongside a key made by `key` (the actor's key text), or null.
  [[nodiscard]] const std::shared_ptr<const std::string>& key_owner(ActorCell& cell);

  /// The calling thread's series of `cell`'s group (and key, with per_actor_key): the cell's cached
  /// one while it runs on the same thread, else looked up (and cached) once.
  [[nodiscard]] GroupSeries& series(ActorCell& cell);

  void count_sent(ActorCell& cell, const MessageVTable& message);
  /// A request of type `request` that `cell` made ended with `outcome`, `ns` after it was sent.
  void count_request(ActorCell& cell, const MessageVTable& request, RequestOutcome outcome, std::uint64_t ns);
  /// At every receive attempt: closes the previous message's handling time, opens the next one's
  /// (`received` null: nothing taken), and records how long `received` waited if it carries a
  /// send stamp. A calm stream's messages share readings (see actor_telemetry.hpp).
  void on_receive(ActorCell& cell, const MessageVTable* received, TelemetryStamp sent_at);
  /// At the end of a run of `cell` that began at `started`: records the busy time, and with
  /// `finished` (exec returned) the handling time of the last message, which no recv will end.
  void end_run(ActorCell& cell, TelemetryStamp started, bool finished);
  /// Counts the change and keeps the per-status actor counts (`from` empty for a new actor,
  /// `to` empty for one that left).
  void on_status(ActorCell& cell, std::optional<ActorStatusKind> from, std::optional<ActorStatusKind> to);

  /// How many of the group's actors are in each status now.
  [[nodiscard]] std::array<std::int64_t, 6> actors_by_status() const;

 private:
  GroupSeries& refresh_series(ActorCell& cell, bool keyed);
  /// Records the open handling window of `cell`, which ends at `now`.
  void close_window(ActorCell& cell, GroupSeries& s, TelemetryStamp now);

  MetricsStorage* storage_ = nullptr;
  const GroupRuntime* group_ = nullptr;
  std::atomic<bool> active_{false};
  std::atomic<bool> per_actor_key_{false};
  std::array<std::atomic<std::int64_t>, 6> by_status_{};
};

}  // namespace elfin::detail
