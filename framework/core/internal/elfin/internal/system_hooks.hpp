// System hooks: what a battery that lives next to the runtime (the network) needs from a running
// system and cannot get through messages — per-system state, a say in where messages to other
// nodes go and in how a plain thread's messages reach them, series of its own in the metrics
// scrape, and the runtime's log.
//
// These are internals for batteries in `framework/`, not an API for actor groups.
//
// Thread safety: every function from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/detail/targets.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/logging.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::detail {

class ActorCell;
class SystemCore;
class GroupRuntime;

/// Decides where a send to an address on another node goes (the network's forwarders).
class RemoteRouter {
 public:
  virtual ~RemoteRouter() = default;
  /// Appends the local actors that carry `envelope` to `to`'s node; an error if there are none.
  [[nodiscard]] virtual std::optional<SendErrorKind> resolve(Addr to, const Envelope& envelope, Targets& out) = 0;
};

/// Carries what a Caller (a thread that runs no actor) sends to one group's actors on the calling
/// thread, instead of through their mailboxes: the network's forwarders encode the message and
/// hand it to the connection themselves, with no forwarder woken in between. A group gets one with
/// `GroupRuntime::set_direct_sink` while it is made, before anything can be sent to it.
class DirectSink {
 public:
  enum class Outcome : std::uint8_t {
    Taken,     ///< carried, or given up on as the actor would give up on it (a request failed)
    Full,      ///< no room now; with a `waiter`, it is woken when there may be
    Declined,  ///< not for the sink: the message goes to `target`'s mailbox
  };
  virtual ~DirectSink() = default;
  /// Any thread that runs no actor. `target` is one of the group's actors the send resolved to;
  /// `envelope` is left as it was unless Taken. For every message to one `target` from one
  /// sender the answer must be either always Declined or never, so that a sender's messages to
  /// it never take two ways (and overtake each other). `alone`: the sender waits for no other
  /// answer; a sink may hold back the message of a sender that does, to carry it with the next.
  [[nodiscard]] virtual Outcome carry(ActorCell& target, Envelope& envelope, ActorCell* waiter, bool alone) = 0;
};

/// The state named `name` of this system, made by `make` on first use and kept until the system is
/// destroyed (after its actors and threads have stopped).
[[nodiscard]] std::shared_ptr<void> system_extension(SystemCore& system, std::string_view name,
                                                     const std::function<std::shared_ptr<void>()>& make);
template <class T>
[[nodiscard]] std::shared_ptr<T> system_extension(SystemCore& system, std::string_view name) {
  return std::static_pointer_cast<T>(system_extension(system, name, [] { return std::make_shared<T>(); }));
}

/// Runs `hook` when the system is dropped, after its actors finished and before its workers and
/// groups go: a battery stops its own threads there. Hooks run in reverse order of registration.
void on_system_shutdown(SystemCore& system, std::function<void()> hook);

/// Appends a battery's series to every scrape of `system` (`telemetry::scrape`, only while telemetry
/// is on), after the runtime's own. `collect` runs on the scraping thread, any thread, possibly
/// two at once: it reads what the battery keeps itself (counters its threads bump with relaxed
/// atomics, which is why a battery's I/O threads, not being actors, need this instead of
/// `elfin::metrics::*`) and must not wait for those threads. Kept until the system is destroyed:
/// capture a weak_ptr to state that may go first. Collectors run in order of registration.
using ScrapeCollector = std::function<void(std::vector<telemetry::MetricSample>& out)>;
void on_scrape(SystemCore& system, ScrapeCollector collect);

/// Sends to other nodes' addresses go through `router` from now on (nullptr: back to UnknownAddr).
/// The router must stay alive until the system is destroyed or the router is replaced.
void set_remote_router(SystemCore& system, RemoteRouter* router);

[[nodiscard]] std::uint16_t node_no_of(const SystemCore& system);
/// The group mounted as `name`, or nullptr.
[[nodiscard]] GroupRuntime* find_group(const SystemCore& system, std::string_view name);
/// A group by its number on this node, or nullptr.
[[nodiscard]] GroupRuntime* group_by_no(const SystemCore& system, std::uint8_t group_no);
/// An event loop that an idle worker waits in instead of sleeping (the network's reactor): the
/// events it handles then run on that worker, and the actors they wake run right after them on
/// the same thread, with no wake-up of another thread in between.
class IdleWaiter {
 public:
  virtual ~IdleWaiter() = default;
  /// On an idle worker, at most one at a time: handles at most one event, waiting for it until
  /// `timeout` or an `interrupt`. False if the loop could not be had (the worker sleeps as usual).
  [[nodiscard]] virtual bool wait(std::chrono::nanoseconds timeout) = 0;
  /// Any thread: makes a `wait` under way return soon.
  virtual void interrupt() = 0;
};

/// Idle workers of `system` wait in `waiter` from now on (nullptr: they sleep as usual again; on
/// return no worker is in, or about to enter, the previous waiter). False, and no change, under
/// virtual time: a simulated system's steps stay with its own threads.
[[nodiscard]] bool set_idle_waiter(SystemCore& system, IdleWaiter* waiter);

/// Output an actor's run produces that is cheaper written once when the run ends than once per
/// message: a connection's answers (a run that answers ten requests from one node writes them
/// with one `send`, as a server writes its replies after each pass of its event loop).
class RunEndFlush {
 public:
  virtual ~RunEndFlush() = default;
  /// On the worker, once the run that registered it has ended (before the worker runs another).
  virtual void flush_after_run() = 0;
};

/// On a worker running an actor: keeps `target` and calls its `flush_after_run` when the run ends;
/// true. Anywhere else (an I/O thread, a plain thread, a worker between runs): false, and the
/// caller writes at once.
[[nodiscard]] bool flush_after_run(std::shared_ptr<RunEndFlush> target);

/// While alive, actors that the calling thread (not a worker: an I/O thread) wakes in `system`
/// are queued together at each `flush()` and at the end, with one lock and at most one wake-up,
/// rather than one of each per actor. For a burst of deliveries; flush often enough that the
/// first actor woken does not wait long. Not nestable. On a worker (an event handled in an
/// IdleWaiter) it does nothing: the actors go to that worker's own stack.
class [[nodiscard]] ScheduleBatch {
 public:
  explicit ScheduleBatch(SystemCore& system);
  ScheduleBatch(const ScheduleBatch&) = delete;
  ScheduleBatch& operator=(const ScheduleBatch&) = delete;
  ~ScheduleBatch();
  void flush();

 private:
  SystemCore& system_;
};

class Scheduler;

/// Under virtual time, `System::advance_time` settles the system between timers by waiting until
/// no actor is queued or running. Work that a thread of a battery or group does for an actor (an
/// I/O thread writing and syncing for the WAL actors) is invisible to that wait: while a hold
/// lives, the system does not count as quiescent. Take it before handing the work over; drop it
/// once the actor has been woken with the result (the woken actor then counts by itself). Costs
/// nothing in real time. Move-only; any thread.
class [[nodiscard]] QuiescenceHold {
 public:
  explicit QuiescenceHold(SystemCore& system);
  QuiescenceHold(QuiescenceHold&& other) noexcept : scheduler_(std::exchange(other.scheduler_, nullptr)) {}
  QuiescenceHold& operator=(QuiescenceHold&&) = delete;
  QuiescenceHold(const QuiescenceHold&) = delete;
  QuiescenceHold& operator=(const QuiescenceHold&) = delete;
  ~QuiescenceHold();

 private:
  Scheduler* scheduler_;
};

/// Writes a runtime record to the system's log (the logger group, or stderr).
void write_runtime_log(SystemCore& system, LogLevel level, const ActorMeta& meta, TraceId trace_id, std::string text);

}  // namespace elfin::detail
