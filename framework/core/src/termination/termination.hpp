// Termination: how a system stops — the census of live actors it waits on, the two-phase
// graceful sequence, the immediate kill and the failure a system ends with.
//
// The graceful sequence has two phases (user groups, then `system.*` groups and the groups that
// must outlive them, see GroupRuntime::stops_in_system_phase). Each: stop spawning (which also
// abandons pending restarts), send a polite Terminate; a timer sends Terminate::closing() after
// `terminate_closing_after` and another gives up on the phase after `terminate_give_up_after`.
// The stages run on the system's clock, so under virtual time one `advance_time` plays them out.
// The first phase begins on the thread that calls `terminate` (its timer exists once `terminate`
// returns); a terminator thread waits for each phase to empty, begins the next and finally marks
// the system terminated. External groups (test proxies) have no coroutine to finish and are not
// waited for.
//
// Thread safety: every member from any thread. One mutex guards the state; an actor leaving its
// group and the live count change under it, so a waiter never sees one without the other.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <elfin/detail/timer_service.hpp>

namespace elfin::detail {

class ActorCell;
class GroupRuntime;
class SystemCore;

class Termination {
 public:
  explicit Termination(SystemCore& system) : system_(system) {}
  Termination(const Termination&) = delete;
  Termination& operator=(const Termination&) = delete;
  ~Termination();

  void actor_registered() { live_actors_.fetch_add(1, std::memory_order_relaxed); }
  /// The actor leaves its group and the census together, then wakes whoever waits for a group to empty.
  void actor_finished(ActorCell& cell);
  [[nodiscard]] std::size_t live_actors() const { return live_actors_.load(std::memory_order_acquire); }

  /// Begins the graceful sequence (the first call only); returns at once.
  void terminate(std::string reason);
  /// Stops at once: workers and timers first, then every actor's mailbox and frame (System::kill).
  void kill(std::string reason);
  /// Terminates and marks the system failed with `reason` (the first failure wins).
  void fail(std::string reason);
  [[nodiscard]] std::optional<std::string> failure() const;

  void join();
  [[nodiscard]] bool join_for(std::chrono::milliseconds timeout);
  /// terminate(reason), join() and the end of the terminator thread: what dropping a system does.
  /// One caller, once.
  void terminate_and_wait(std::string reason);

 private:
  [[nodiscard]] std::chrono::milliseconds closing_after() const;
  [[nodiscard]] std::chrono::milliseconds give_up_after() const;
  [[nodiscard]] std::vector<GroupRuntime*> phase_groups(bool system_phase) const;
  /// Stage one of a phase: stop spawning, polite Terminate, the timer of stage two.
  void begin_phase(bool system_phase, const std::string& reason);
  /// Stage two (a timer callback): Terminate::closing(), the timer that gives up.
  void close_phase(std::uint64_t phase, const std::vector<GroupRuntime*>& groups, const std::string& reason);
  void sequence(std::string reason);
  void mark_terminated();

  SystemCore& system_;
  std::atomic<std::size_t> live_actors_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;          // actor finished / phase gave up / termination done
  bool terminating_ = false;            // guarded by mu_
  bool terminated_ = false;             // guarded by mu_
  bool killed_ = false;                 // guarded by mu_; a termination in progress stops waiting
  std::optional<std::string> failure_;  // guarded by mu_
  // The phase in progress (0: none); stage timers of an earlier phase see a different number
  // and do nothing.
  std::uint64_t phase_ = 0;                // guarded by mu_
  std::uint64_t phases_begun_ = 0;         // guarded by mu_
  bool phase_gave_up_ = false;             // guarded by mu_
  TimerService::TimerId stage_timer_ = 0;  // guarded by mu_
  std::thread terminator_;                 // set under mu_ by the first terminate
};

}  // namespace elfin::detail
