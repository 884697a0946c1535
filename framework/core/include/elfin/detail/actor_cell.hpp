// ActorCell: everything the runtime keeps for one actor — identity, mailbox, scheduling state,
// the coroutine frame, status and the actor's current trace id.
//
// Scheduling state machine (`sched_`), the argument for "an actor never runs on two threads at
// once" and "no wakeup is lost":
//
//   Idle ──notify──▶ Scheduled ──worker picks──▶ Running ──suspends, CAS──▶ Idle
//                                                  │ ▲
//                                          notify  ▼ │ worker re-polls
//                                              RunningNotified
//   any ──finish──▶ Dead (notify is a no-op)
//
// Only the thread that moved a cell Idle→Scheduled enqueues it, exactly once; only the worker that
// dequeued it moves it out of Scheduled. A notify that races with the worker going idle either
// sees Running (then its CAS to RunningNotified makes the worker's CAS Running→Idle fail, and the
// worker polls again) or sees Idle (then it schedules). All transitions are acq_rel CAS on one
// atomic, so whatever a notifier wrote before notifying (a pushed message, an answer) is visible
// to the worker that polls next.
//
// A suspended actor records where to resume (`resume_point_`) and what it waits for
// (`poll_fn_`): the worker calls the poll function before resuming and goes idle if it says
// "not yet". Wakeups may be spurious; polls make them harmless.
//
// A kill (`request_kill`, any thread) only sets a flag and notifies: the worker that next takes
// the actor checks the flag before it polls or resumes, and ends the actor there (lifecycle.hpp,
// end_killed), so the frame is destroyed by the one thread that owns it, while it is suspended.
//
// Restarts reuse the cell: its address, its mailbox (with whatever was sent while it waited) and
// its backoff series survive; `begin_lifecycle` resets everything that belonged to the previous
// actor (status, trace id, restart override, coroutine frame).
//
// Thread safety: `notify`, `addr`, `group`, `mailbox().push`, `reported_status` from any thread;
// everything else only from the worker running the actor (or, for external cells, the proxy's
// thread), or from the supervisor while the cell waits for a restart and nothing runs it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <elfin/actor_start_info.hpp>
#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/detail/actor_telemetry.hpp>
#include <elfin/detail/key_text.hpp>
#include <elfin/detail/pop_result.hpp>
#include <elfin/detail/restart_backoff.hpp>
#include <elfin/detail/route_cache.hpp>
#include <elfin/detail/source.hpp>
#include <elfin/detail/spin_lock.hpp>
#include <elfin/errors.hpp>
#include <elfin/message.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/singleton.hpp>
#include <elfin/task.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

class GroupRuntime;
class Mailbox;
class RequestStateBase;

using PollFn = bool (*)(void* awaiter);

enum class SchedState : std::uint8_t { Idle, Scheduled, Running, RunningNotified, Dead };

class ActorCell : public std::enable_shared_from_this<ActorCell> {
 public:
  /// Messages an actor may take in one run before it yields to others (elfo's coop budget).
  static constexpr std::uint32_t kRecvBudget = 64;
  // The mailbox lives inside the cell, as a member would (no allocation or pointer to follow on a
  // send), but its type stays out of the public headers: its room is reserved here and checked
  // against Mailbox's size and alignment where it is built (actor_cell.cpp).
  static constexpr std::size_t kMailboxSize = 144;
  static constexpr std::size_t kMailboxAlign = alignof(void*);

  ActorCell(GroupRuntime& group, bool external);
  ActorCell(const ActorCell&) = delete;
  ActorCell& operator=(const ActorCell&) = delete;
  virtual ~ActorCell();

  [[nodiscard]] Addr addr() const { return addr_; }
  void set_addr(Addr addr) { addr_ = addr; }
  [[nodiscard]] GroupRuntime& group() const { return *group_; }
  /// The key as printed in logs and metrics; formatted on demand (spawning stays cheap).
  [[nodiscard]] virtual std::string key_text() const = 0;
  /// The key text shared by this actor's dumps, made on first use; null for a singleton group.
  /// Only from the thread running the actor.
  [[nodiscard]] const std::shared_ptr<const std::string>& key_for_dumps();
  [[nodiscard]] ActorMeta meta() const;
  /// False for actors of a singleton group (their key says nothing).
  [[nodiscard]] virtual bool has_key() const = 0;
  /// The actor's mailbox (the runtime's type: elfin/internal/mailbox.hpp).
  /// Inline, and defined with Mailbox (the runtime's code, which includes it, is what calls it).
  [[nodiscard]] inline Mailbox& mailbox();
  /// Closes the mailbox: what is queued is still taken, then the input ends. False if already closed.
  bool close_mailbox();
  void set_mailbox_capacity(std::size_t capacity);
  [[nodiscard]] bool is_external() const { return external_; }

  /// Makes the actor run (or re-poll) soon. Any thread.
  void notify();
  /// Blocks the calling (proxy) thread until notified or `deadline`; external cells only.
  /// Returns false on timeout.
  bool wait_external(std::chrono::steady_clock::time_point deadline);
  /// For external cells shared by several threads (elfin::Caller): each waiter reads the count
  /// of notifications before it tries, and `wait_external_after` returns once the count moved
  /// past that (or at `deadline`, false), so no thread consumes another's wake-up.
  [[nodiscard]] std::uint64_t external_signals();
  bool wait_external_after(std::uint64_t seen, std::chrono::steady_clock::time_point deadline);

  /// Asks the runtime to end this actor the next time a worker takes it, without resuming it
  /// (Context::kill). False if a kill was asked already. Any thread.
  bool request_kill(std::string reason);
  [[nodiscard]] bool kill_requested() const { return kill_requested_.load(std::memory_order_acquire); }
  /// The reason the first kill gave. Any thread.
  [[nodiscard]] std::string kill_reason() const;

  // --- owned by the thread running the actor --------------------------------------------------
  void suspend(std::coroutine_handle<> at, PollFn poll, void* awaiter) {
    resume_point_ = at;
    poll_fn_ = poll;
    poll_arg_ = awaiter;
  }
  /// Ask the worker to requeue the actor behind others instead of resuming it now.
  void request_yield() { yield_requested_ = true; }
  /// One unit of coop budget; false once this run's budget is spent.
  bool consume_budget() { return budget_ == 0 ? false : (--budget_, true); }

  [[nodiscard]] TraceId trace_id() const { return trace_id_; }
  void set_trace_id(TraceId id) { trace_id_ = id; }
  [[nodiscard]] const ActorStatus& status() const { return status_; }
  void set_status(ActorStatus status);
  /// The status as last set, for other threads (status subscriptions). Any thread.
  [[nodiscard]] ActorStatus reported_status() const {
    std::lock_guard lock(status_mu_);
    return status_;
  }

  /// This lifecycle's restart policy override (`ctx.set_restart_policy`); nullopt: the group's.
  [[nodiscard]] const std::optional<RestartPolicy>& restart_override() const { return restart_override_; }
  void set_restart_override(std::optional<RestartPolicy> policy) { restart_override_ = policy; }
  [[nodiscard]] const ActorStartInfo& start_info() const { return start_info_; }
  [[nodiscard]] RestartBackoff& backoff() { return backoff_; }
  /// When the current lifecycle started, on the system's (possibly virtual) clock.
  [[nodiscard]] std::chrono::steady_clock::time_point started_at() const { return started_at_; }
  /// Resets the per-lifecycle state before a restart (the coroutine frame is already gone).
  void begin_lifecycle(ActorStartInfo info);
  void set_started_at(std::chrono::steady_clock::time_point at) { started_at_ = at; }

  /// The next message for the actor, after the runtime took its share (Ping, UpdateConfig, ...),
  /// from the mailbox or an attached source. The two take turns whenever both have something, so
  /// neither a busy source nor a busy mailbox starves the other. A closed and drained mailbox
  /// ends the actor's input even if sources remain.
  PopResult take_next(Envelope& out);
  /// The actor called recv but takes nothing now (its mailbox is empty, or it spent its budget
  /// and yields first): the message it was handling is done.
  void end_handling();
  /// Requests whose answer was dropped while the actor unwound an exception (abandon_answer);
  /// `settle_abandoned` answers them once the outcome is known.
  void keep_abandoned(std::shared_ptr<RequestStateBase> state) { abandoned_.push_back(std::move(state)); }
  void settle_abandoned(const RequestError& error);
  /// The sources attached with `ctx.attach`.
  [[nodiscard]] SourceSet& sources() { return sources_; }
  [[nodiscard]] const std::shared_ptr<const void>& config() const { return config_; }
  void set_config(std::shared_ptr<const void> config) { config_ = std::move(config); }

  // --- runtime internals ------------------------------------------------------------------------
  std::atomic<SchedState> sched_{SchedState::Idle};
  std::coroutine_handle<> resume_point_;
  PollFn poll_fn_ = nullptr;
  void* poll_arg_ = nullptr;
  bool yield_requested_ = false;
  std::uint32_t budget_ = kRecvBudget;
  Task<> task_;
  std::string failure_;       ///< set when exec reports an error result
  ActorTelemetry telemetry_;  ///< only the thread running the actor touches it
  RouteCache route_cache_;    ///< the target of its last unicast; only the thread running the actor

 private:
  GroupRuntime* group_;
  Addr addr_;
  alignas(kMailboxAlign) std::byte mailbox_[kMailboxSize];
  TraceId trace_id_;
  ActorStatus status_;  // written under status_mu_ by the owner, read without it by the owner
  mutable SpinLock status_mu_;
  std::atomic<bool> kill_requested_{false};
  std::string kill_reason_;  // guarded by status_mu_
  std::optional<RestartPolicy> restart_override_;
  ActorStartInfo start_info_;
  RestartBackoff backoff_;
  std::chrono::steady_clock::time_point started_at_;
  bool external_;
  bool seen_recv_ = false;
  bool sources_first_ = false;  ///< the last item came from the mailbox: sources go first next
  SourceSet sources_;
  std::shared_ptr<const void> config_;
  std::shared_ptr<const std::string> dump_key_;
  bool dump_key_made_ = false;
  std::vector<std::shared_ptr<RequestStateBase>> abandoned_;

  // External cells (test proxies) are woken through a condition variable, not the scheduler.
  std::mutex ext_mu_;
  std::condition_variable ext_cv_;
  std::uint64_t ext_signals_ = 0;
  std::uint64_t ext_seen_ = 0;
};

/// An actor of a group whose key type is K.
template <class K>
class KeyedCell final : public ActorCell {
 public:
  KeyedCell(GroupRuntime& group, K key, bool external) : ActorCell(group, external), key_(std::move(key)) {}
  [[nodiscard]] const K& key() const { return key_; }
  [[nodiscard]] std::string key_text() const override { return detail::key_text(key_); }
  [[nodiscard]] bool has_key() const override { return !std::is_same_v<K, Singleton>; }

 private:
  K key_;
};

}  // namespace elfin::detail
